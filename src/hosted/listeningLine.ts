/**
 * The server's `listening` line heard in an output stream a provider's command API delivers in
 * chunks (E2B's `onStdout`): `Launched.listening` (services/Driver.ts) completes at that line, so the
 * `/alive` wait's first attempt is answered instead of a poll whose steps overshoot the server's
 * boot, or once the stream ends without it (the driver can no longer tell: the wait polls as before).
 */
import { Deferred, Effect } from "effect"
import { LISTENING_PREFIX } from "../server/announce.ts"

export interface ListeningLine {
  /** Feed a chunk of the server's standard output (a line may come split over chunks). */
  readonly output: (chunk: string) => void
  /** The stream ended (the server exited, the connection was lost). */
  readonly ended: () => void
  readonly listening: Effect.Effect<void>
}

/** A listener for one server's output, completed at its `listening` line or the stream's end. */
export const listeningLine = Effect.gen(function*() {
  const heard = yield* Deferred.make<void>()
  const complete = () => void Deferred.doneUnsafe(heard, Effect.void)
  // What follows the last newline: a line split over chunks is matched once whole.
  let partial = ""
  return {
    output: (chunk) => {
      const text = partial + chunk
      const lines = text.split("\n")
      partial = lines.pop() ?? ""
      if (lines.some((line) => line.startsWith(LISTENING_PREFIX))) complete()
      // A line that never ends is not kept whole: only enough of it to match the prefix.
      if (partial.length > LISTENING_PREFIX.length) partial = partial.slice(0, LISTENING_PREFIX.length)
    },
    ended: complete,
    listening: Deferred.await(heard)
  } satisfies ListeningLine
})
