/**
 * A port free on 127.0.0.1, for a listener that must be told its port before it starts: VS Code's
 * `VSCODE_PORT`, which OpenHands' protocol gives the server in its environment (the server itself
 * binds port 0 and announces what it got, which is race-free; this is not). A local server shares
 * the host's ports, so the fixed 8001 a sandbox uses may be anyone's here. Between this probe and
 * the server's bind another process may take the port: the plugin is then off and the hand-over
 * logs it (serverStart/serverTools.ts), as when the port is taken in a sandbox.
 */
import { Effect } from "effect"
import { createServer } from "node:net"
import { RuntimeStartError } from "../../schema/errors.ts"

/** A port the OS would assign on 127.0.0.1 now (bound, read, released). */
export const freeLoopbackPort: Effect.Effect<number, RuntimeStartError> = Effect.callback((resume) => {
  const probe = createServer()
  probe.once(
    "error",
    (error) =>
      resume(Effect.fail(new RuntimeStartError({ message: `Cannot find a free port on 127.0.0.1: ${error.message}` })))
  )
  probe.listen(0, "127.0.0.1", () => {
    const { port } = probe.address() as { port: number }
    probe.close(() => resume(Effect.succeed(port)))
  })
})
