import { Effect } from "effect"

/**
 * Wait for something another process or fiber makes true: `check` is polled every `everyMs`
 * until it holds; after `withinMs` the test dies naming `what` (a function when the message
 * should show the state at the time of failure). Poll slowly when `check` is costly (a
 * `docker` CLI call).
 */
export const eventually = (
  what: string | (() => string),
  check: () => boolean,
  withinMs = 5_000,
  everyMs = 50
): Effect.Effect<void> =>
  Effect.gen(function*() {
    for (const start = Date.now(); Date.now() - start < withinMs;) {
      if (check()) return
      yield* Effect.sleep(everyMs)
    }
    if (check()) return
    return yield* Effect.die(
      new Error(`not within ${withinMs} ms: ${typeof what === "string" ? what : what()}`)
    )
  })
