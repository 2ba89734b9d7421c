/**
 * The server's `listening` line heard in an output stream a provider's command API delivers in
 * chunks (E2B's `onStdout`): `Launched.listening` (services/Driver.ts) completes at that line, so the
 * `/alive` wait's first attempt is answered instead of a poll whose steps overshoot the server's
 * boot, or once the stream ends without it (the driver can no longer tell: the wait polls as before).
 * Another line can be listened for the same way (`found`: the image-server line's, serverFiles.ts).
 */
import { Deferred, type Duration, Effect } from "effect"
import { LISTENING_PREFIX } from "../server/announce.ts"

export interface ListeningLine {
  /** Feed a chunk of the server's standard output (a line may come split over chunks). */
  readonly output: (chunk: string) => void
  /** The stream ended (the server exited, the connection was lost). */
  readonly ended: () => void
  readonly listening: Effect.Effect<void>
  /** Completes at a line starting with `also`, or at the stream's end. */
  readonly found: Effect.Effect<void>
  /** Whether the `listening` line itself came (not the end), for a driver that stops following then. */
  readonly heard: () => boolean
  /** Whether the line starting with `also` itself came (not the end). */
  readonly marked: () => boolean
}

/** A listener for one server's output, completed at its `listening` line (or `also`'s) or the stream's end. */
export const listeningLine = (also = LISTENING_PREFIX) =>
  Effect.sync((): ListeningLine => {
    const listening = Deferred.makeUnsafe<void>()
    const found = Deferred.makeUnsafe<void>()
    const longest = Math.max(LISTENING_PREFIX.length, also.length)
    // What follows the last newline: a line split over chunks is matched once whole.
    let partial = ""
    let heard = false
    let marked = false
    return {
      output: (chunk) => {
        const lines = (partial + chunk).split("\n")
        partial = lines.pop() ?? ""
        for (const line of lines) {
          if (line.startsWith(LISTENING_PREFIX)) {
            heard = true
            Deferred.doneUnsafe(listening, Effect.void)
          }
          if (line.startsWith(also)) {
            marked = true
            Deferred.doneUnsafe(found, Effect.void)
          }
        }
        // A line that never ends is not kept whole: only enough of it to match a prefix.
        if (partial.length > longest) partial = partial.slice(0, longest)
      },
      ended: () => {
        Deferred.doneUnsafe(listening, Effect.void)
        Deferred.doneUnsafe(found, Effect.void)
      },
      listening: Deferred.await(listening),
      found: Deferred.await(found),
      heard: () => heard,
      marked: () => marked
    }
  })

/**
 * `read` (a stream's whole read, its request cancelled when interrupted) feeding `heard` in the
 * background, in the current scope: let go at the `listening` line, so the stream does not run on
 * for the sandbox's life, or at `within` where given (a stream that stalls: neither data, nor an
 * end, nor an error). Its end, failure or time-out ends `heard`'s waits, and `/alive` is polled as
 * without a stream. The fiber, to let go sooner.
 */
export const hearUntilListening = (
  heard: ListeningLine,
  read: Effect.Effect<unknown, unknown>,
  within?: Duration.Input
) => {
  const hearing = Effect.raceFirst(Effect.ignore(read), heard.listening)
  return (within === undefined ? hearing : Effect.asVoid(Effect.timeoutOption(hearing, within))).pipe(
    Effect.ensuring(Effect.sync(() => heard.ended())),
    Effect.forkScoped
  )
}

/**
 * Whether the image's server started (`imageServerLine`, serverFiles.ts): yes when `heard`'s marker
 * line itself came; else as `asked` of the provider says, asked once the stream ended without the
 * marker, and from `after` on whatever the stream does (a stream can stall, or never close).
 */
export const markedOrAsked = <E, R>(
  heard: ListeningLine,
  asked: Effect.Effect<boolean, E, R>,
  after: Duration.Input
): Effect.Effect<boolean, E, R> =>
  Effect.raceFirst(
    Effect.flatMap(heard.found, () => heard.marked() ? Effect.succeed(true) : asked),
    Effect.delay(asked, after)
  )
