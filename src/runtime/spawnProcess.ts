/**
 * `Runtime.spawn`: a background process's handle over the backend's `ProcessControl`, scoped (the
 * scope's end removes, and so kills, the process) and masked like every other runtime call.
 */
import { Effect, Stream } from "effect"
import type { RuntimeDisconnectedError, RuntimeError, RuntimePausedError } from "../schema/errors.ts"
import type { SecretMask } from "../schema/secrets.ts"
import type { ProcessHandle, SpawnOptions } from "../services/Processes.ts"
import type { RuntimeBackend } from "../services/RuntimeBackend.ts"
import { unredactedEnv } from "./envVars.ts"
import { unsupported } from "./unsupported.ts"

/** The runtime's mask and status gate around one backend call (`makeRuntime`'s `masked`). */
export type Masked = <A, E>(
  effect: Effect.Effect<A, E>
) => Effect.Effect<A, E | RuntimeDisconnectedError | RuntimePausedError>

export const makeSpawn = (backend: RuntimeBackend, mask: SecretMask, masked: Masked) => {
  const kind = backend.info.kind
  return Effect.fn("Runtime.spawn")(function*(command: string, options: SpawnOptions = {}) {
    const { processes } = backend
    if (processes === undefined) {
      return yield* unsupported(kind, "spawn background processes", "it has no process manager")
    }
    const { plain, secrets } = yield* unredactedEnv(options.env ?? {}, mask)
    const started = yield* Effect.acquireRelease(
      masked(processes.start({
        command,
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
        ...(options.env === undefined ? {} : { env: plain, secrets })
      })),
      ({ id }) => Effect.ignore(processes.remove(id))
    )
    const { id } = started
    const handle: ProcessHandle<RuntimeError> = {
      id,
      pid: started.pid,
      // Defence in depth, as for observations: the executor masked before cutting into chunks.
      output: Stream.unwrap(masked(processes.output(id))).pipe(Stream.map((chunk) => mask.deep(chunk))),
      write: (text) => masked(processes.write(id, text)),
      closeStdin: masked(processes.closeStdin(id)),
      signal: (name) => masked(processes.signal(id, name)),
      wait: masked(processes.wait(id))
    }
    if (options.stdin !== undefined) {
      // The process was just started in this scope: it cannot be unknown yet.
      yield* Effect.andThen(handle.write(options.stdin), handle.closeStdin).pipe(
        Effect.catchTag("ProcessNotFoundError", Effect.die)
      )
    }
    return handle
  }, Effect.annotateSpans({ "runtime.kind": kind }))
}
