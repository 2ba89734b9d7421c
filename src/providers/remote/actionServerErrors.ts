/**
 * How a remote runtime reads its action server's failed answers (spec §14
 * `_send_action_server_request`): they come from the runtime API's proxy, which says "not here"
 * with 404, "restarting" with 502/504 and "paused" with 503. OpenHands' texts, with the answer as
 * the original error; a paused runtime kept alive is resumed and the request sent once more.
 */
import { Effect } from "effect"
import type { ServerErrorHook, ServerErrorVerdict } from "../../client/ActionClient.ts"

const disconnected = (message: string): ServerErrorVerdict => ({ _tag: "Disconnected", message })

const unavailable = (original: string) =>
  disconnected(
    "Runtime is temporarily unavailable. This may be due to a restart or network issue, please try again. " +
      `Original error: ${original}`
  )

const pausedFor = (original: string) =>
  disconnected(`Runtime is paused and could not be resumed. Original error: ${original}`)

/** The hook for the HTTP client; `resume` (only with `keepRuntimeAlive`) brings a paused runtime back. */
export const remoteServerErrors = (
  resume: Effect.Effect<void, { readonly message: string }> | undefined
): ServerErrorHook =>
({ detail, retried, status }) => {
  const original = `HTTP ${status} ${detail}`
  // Sent again after a resume: whatever fails now, the resume did not bring it back (as OpenHands).
  if (retried) return Effect.succeed(pausedFor(original))
  if (status === 404) {
    return Effect.succeed(
      disconnected(`Runtime is not responding. This may be temporary, please try again. Original error: ${original}`)
    )
  }
  if (status === 502 || status === 504) return Effect.succeed(unavailable(original))
  if (status !== 503) return Effect.succeed(undefined)
  if (resume === undefined) return Effect.succeed(unavailable(original))
  return resume.pipe(
    Effect.as<ServerErrorVerdict>({ _tag: "Retry" }),
    Effect.catch((error) => Effect.succeed(pausedFor(error.message)))
  )
}
