/**
 * Header names whose values are credentials, kept out of trace spans.
 *
 * Effect records a request's headers on its client and server spans once a program asks for
 * them (`HttpClient.TracerHeaderFilter`, `HttpMiddleware.TracerHeaderFilter`), and writes
 * `<redacted>` only for the names in `Headers.CurrentRedactedNames`: by default authorization,
 * cookies and `x-api-key`. Our session key travels as `X-Session-API-Key` and a provider's proxy
 * token under a header of the provider's own name (Daytona's preview token, Runloop's tunnel
 * authorization), so without this a user who turned header recording on for their own calls
 * would export every sandbox's key to their collector.
 */
import { Effect, Layer } from "effect"
import { Headers, HttpClient } from "effect/http"

/** The action server's session key header (lower case, as Node hands it over). */
export const SESSION_KEY_HEADER = "x-session-api-key"

const addedTo = (names: ReadonlyArray<string>) => (current: ReadonlyArray<string | RegExp>) => [...current, ...names]

/** `client`, its spans redacting `names` as well as whatever the program already redacts. */
export const redactingHeaders =
  (names: ReadonlyArray<string>) =>
  <E, R>(client: HttpClient.HttpClient.With<E, R>): HttpClient.HttpClient.With<E, R> =>
    HttpClient.transform(
      client,
      (response) => Effect.updateService(response, Headers.CurrentRedactedNames, addedTo(names))
    )

/**
 * For a server's layer: the spans of the requests it serves redact the session key. A layer, not
 * a middleware, because the server's span ends after every middleware has returned.
 */
export const serverRedactsSessionKey: Layer.Layer<never> = Layer.effect(
  Headers.CurrentRedactedNames,
  Effect.map(Headers.CurrentRedactedNames, addedTo([SESSION_KEY_HEADER]))
)
