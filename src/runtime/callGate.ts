/**
 * Whether a runtime call may run now, read from its status: a released runtime (STOPPED) refuses
 * every call the same way on every runtime, and a paused one fails at once or waits for the resume
 * (`whilePaused`). `makeRuntime` sends every backend call through `unpaused`.
 */
import { Effect } from "effect"
import { RuntimeDisconnectedError, type RuntimeError, RuntimePausedError } from "../schema/errors.ts"
import type { WhilePaused } from "../services/Runtime.ts"
import type { StatusCell } from "./statusCell.ts"

export interface CallGate {
  /** `effect`, unless the runtime was released; without this CliRuntime died with `ENOENT .../command.sh`. */
  readonly live: <A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E | RuntimeDisconnectedError>
  /** `live`, and while PAUSED: fail at once, or wait for the resume. */
  readonly unpaused: <A, E>(
    effect: Effect.Effect<A, E>
  ) => Effect.Effect<A, E | RuntimeDisconnectedError | RuntimePausedError>
  /** PAUSED from before the sandbox is frozen (no call starts meanwhile); the old status back if `freeze` fails. */
  readonly pause: (freeze: Effect.Effect<void, RuntimeError>) => Effect.Effect<void, RuntimeError>
}

export const makeCallGate = (kind: string, status: StatusCell, whilePaused: WhilePaused | undefined): CallGate => {
  const live = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E | RuntimeDisconnectedError> =>
    Effect.flatMap(status.get, (current): Effect.Effect<A, E | RuntimeDisconnectedError> =>
      current === "STOPPED"
        ? Effect.fail(
          new RuntimeDisconnectedError({
            message: `The ${kind} runtime was released (its layer's scope closed): build a new runtime to run actions.`
          })
        )
        : effect)

  const unpaused = <A, E>(
    effect: Effect.Effect<A, E>
  ): Effect.Effect<A, E | RuntimeDisconnectedError | RuntimePausedError> =>
    Effect.flatMap(status.get, (current): Effect.Effect<A, E | RuntimeDisconnectedError | RuntimePausedError> => {
      if (current !== "PAUSED") return live(effect)
      if (whilePaused === "wait") return Effect.andThen(status.awaitNot("PAUSED"), live(effect))
      return Effect.fail(
        new RuntimePausedError({
          message: `The ${kind} runtime is paused: call resume first, or build its layer with whilePaused: "wait" ` +
            "to have calls wait for the resume."
        })
      )
    })

  const pause = Effect.fn("Runtime.pause")(function*(freeze: Effect.Effect<void, RuntimeError>) {
    const before = yield* status.get
    yield* status.set("PAUSED")
    yield* freeze.pipe(Effect.tapError(() => status.update((s) => s === "PAUSED" ? before : s)))
  })

  return { live, unpaused, pause }
}
