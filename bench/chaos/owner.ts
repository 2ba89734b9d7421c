/**
 * The owner process the owner-kill group SIGKILLs: it starts a LocalRuntime
 * (`local`) or a DockerRuntime (`docker <baseImage> [options]`, `options` a JSON
 * object of DockerRuntimeOptions such as `workspace` and `ownerLease`), starts a
 * background command in it, prints `chaos-owner {"id": ...}` on one line, and
 * waits to be killed.
 */
import { ManagedRuntime } from "effect"
import { DockerRuntime, type DockerRuntimeOptions } from "../../src/docker.ts"
import { Runtime } from "../../src/index.ts"
import { LocalRuntime } from "../../src/local.ts"

const [kind, image, options] = process.argv.slice(2)
const layer = kind === "docker"
  ? DockerRuntime.layer({
    ...(JSON.parse(options ?? "{}") as DockerRuntimeOptions),
    baseImage: image!,
    sessionId: `chaos-owner-${process.pid}`
  })
  : LocalRuntime.layer()
const runtime = ManagedRuntime.make(layer)
const rt = await runtime.runPromise(Runtime)
await runtime.runPromise(rt.runCommand("nohup sleep 900 >/dev/null 2>&1 &"))
console.log(`chaos-owner ${JSON.stringify({ id: rt.info.id, workspace: rt.info.workspace })}`)
// Bounded: the group kills this long before; a stray owner still goes away on its own.
setTimeout(() => void runtime.dispose().then(() => process.exit(0)), 600_000)
