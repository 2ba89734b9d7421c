/** A `Runtime` that records every action sent and every observation or error returned, to grep them. */
import { Effect, Layer } from "effect"
import type { Action } from "../../src/index.ts"
import { Runtime } from "../../src/index.ts"

export const recordingRuntime = (seen: Array<unknown>) =>
  Layer.effect(
    Runtime,
    Runtime.use((rt) =>
      Effect.succeed(
        Runtime.of({
          ...rt,
          run: (action: Action) =>
            Effect.sync(() => seen.push(action)).pipe(
              Effect.andThen(rt.run(action)),
              Effect.tap((obs) => Effect.sync(() => seen.push(obs))),
              Effect.tapError((e) => Effect.sync(() => seen.push(e)))
            )
        })
      )
    )
  )
