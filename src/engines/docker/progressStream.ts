/**
 * The engine's progress of a long call (a pull, a build: JSON events on one response) as a stream
 * of its events, ending with the call, failing with `failed(error)` where the engine's stream says
 * the call failed. A pull and a build read it the same way, each its own events.
 */
import type Docker from "dockerode"
import { Cause, Effect, Queue, Stream } from "effect"

export const progressStream = <Event, E>(
  docker: Docker,
  output: NodeJS.ReadableStream,
  failed: (error: Error) => E
): Stream.Stream<Event, E> =>
  Stream.callback<Event, E>((queue) =>
    Effect.sync(() =>
      docker.modem.followProgress(
        output,
        (error) => error ? Queue.failCauseUnsafe(queue, Cause.fail(failed(error))) : Queue.endUnsafe(queue),
        (event: Event) => Queue.offerUnsafe(queue, event)
      )
    )
  )
