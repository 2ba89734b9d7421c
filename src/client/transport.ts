/**
 * The HTTP transport's request policy, shared by every endpoint the client calls: one attempt at
 * a time while the sandbox is known to run, re-sends of requests that never reached a handler
 * (429, connection refused), the request's budget, and what each status means (2xx: the
 * endpoint's answer; 404 and 5xx: the server, or a proxy before it, is gone, as in OpenHands'
 * client; 401/403 after the sandbox stopped: someone else's server on a freed address).
 */
import { Duration, Effect } from "effect"
import { type HttpClient, type HttpClientError, type HttpClientRequest, type HttpClientResponse } from "effect/http"
import { RuntimeDisconnectedError, RuntimeRequestError, RuntimeTimeoutError } from "../schema/errors.ts"
import type { ActionClientOptions } from "./clientOptions.ts"
import { retrySchedule } from "./policies.ts"
import type { ProcessTransport, Send } from "./processes.ts"

/** What the endpoints of the client send their requests through. */
export interface Transport extends ProcessTransport {
  /** A 2xx response's JSON body; a body that is not JSON means the server is gone. */
  readonly jsonOf: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<unknown, RuntimeDisconnectedError>
}

/** The response's `{"detail": ...}` text, or its raw body. */
const detailOf = (response: HttpClientResponse.HttpClientResponse) =>
  response.text.pipe(
    Effect.map((text) => {
      try {
        const json = JSON.parse(text)
        return typeof json?.detail === "string" ? json.detail : text
      } catch {
        return text
      }
    }),
    Effect.orElseSucceed(() => "")
  )

/** Connection refused: the request never reached a server, so sending it again is safe. */
const neverDelivered = (error: HttpClientError.HttpClientError) =>
  error.reason._tag === "TransportError" && /ECONNREFUSED/.test(error.message)

/** OpenHands' text for a request that outlived its budget. */
export const timedOut = (what: string, timeout: Duration.Duration) =>
  new RuntimeTimeoutError({
    message: `Runtime failed to return ${what} before the requested timeout of ${Duration.toSeconds(timeout)}s`
  })

class Retryable {
  readonly _tag = "Retryable"
}

/** The request was not sent: the sandbox is known to have stopped (`sandboxGone`). */
class NotSent {
  readonly _tag = "NotSent"
}

/** `client` already carries the base URL and the session key (`makeActionClient`). */
export const makeTransport = (options: ActionClientOptions, client: HttpClient.HttpClient): Transport => {
  /** Fail with `message`, marking the runtime disconnected (a more specific ERROR_MEMORY set by the provisioner stays). */
  const disconnectedWith = (message: string): Effect.Effect<never, RuntimeDisconnectedError> =>
    options.status.update((s) => s === "ERROR_MEMORY" ? s : "ERROR_RUNTIME_DISCONNECTED").pipe(
      Effect.andThen(Effect.fail(new RuntimeDisconnectedError({ message })))
    )

  const disconnected = Effect.fn("ActionClient.disconnected")(function*(what: string, cause: string) {
    const why = options.explainDisconnect === undefined ? undefined : yield* options.explainDisconnect
    return yield* disconnectedWith(
      `The action server at ${options.baseUrl} stopped answering (${what}): ${why ?? cause}. ` +
        "Its session is lost; start a new runtime."
    )
  })

  /** One attempt; 429 and refused connections (never delivered) are worth retrying. */
  const attempt = (
    request: HttpClientRequest.HttpClientRequest
  ): Effect.Effect<HttpClientResponse.HttpClientResponse, Retryable | NotSent | HttpClientError.HttpClientError> =>
    // Suspended: a retry runs it again, and must see the sandbox gone in between.
    Effect.suspend((): Effect.Effect<
      HttpClientResponse.HttpClientResponse,
      Retryable | NotSent | HttpClientError.HttpClientError
    > =>
      options.sandboxGone?.() === true ? Effect.fail(new NotSent()) : client.execute(request).pipe(
        Effect.catch((error): Effect.Effect<never, Retryable | HttpClientError.HttpClientError> =>
          neverDelivered(error) ? Effect.fail(new Retryable()) : Effect.fail(error)
        ),
        Effect.flatMap((response) => response.status === 429 ? Effect.fail(new Retryable()) : Effect.succeed(response))
      )
    )

  /** `send`, told whether this is the one re-send a `serverError` hook's `Retry` allows. */
  const sendOnce = <A, E, F = never>(
    what: string,
    request: HttpClientRequest.HttpClientRequest,
    timeout: Duration.Duration,
    onOk: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, E>,
    refused: ((status: number, message: string) => F | undefined) | undefined,
    retried: boolean
  ): Effect.Effect<A, E | F | RuntimeDisconnectedError | RuntimeTimeoutError | RuntimeRequestError> =>
    Effect.gen(function*() {
      const response = yield* attempt(request).pipe(
        Effect.retry({ schedule: options.retrySchedule ?? retrySchedule, while: (e) => e instanceof Retryable }),
        Effect.catch((e) =>
          disconnected(
            what,
            e instanceof Retryable
              ? "the server kept refusing the request"
              : e instanceof NotSent
              ? "the sandbox has stopped"
              : e.message
          )
        ),
        Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.fail(timedOut(what, timeout)) })
      )
      if (response.status >= 200 && response.status < 300) return yield* onOk(response)
      const message = yield* detailOf(response)
      const own = response.status < 500 ? refused?.(response.status, message) : undefined
      if (own !== undefined) return yield* Effect.fail(own)
      if ((response.status === 401 || response.status === 403) && options.explainDisconnect !== undefined) {
        // Our key refused: once the sandbox has stopped, whoever answered is not its server (a
        // freed host port taken by another listener), so the session is lost, not the request bad.
        const why = yield* options.explainDisconnect
        if (why !== undefined) return yield* disconnected(what, why)
      }
      if (response.status >= 500 || response.status === 404) {
        const verdict = options.serverError === undefined
          ? undefined
          : yield* options.serverError({ status: response.status, detail: message, retried })
        if (verdict?._tag === "Retry" && !retried) return yield* sendOnce(what, request, timeout, onOk, refused, true)
        if (verdict?._tag === "Disconnected") return yield* disconnectedWith(verdict.message)
        return yield* disconnected(what, `HTTP ${response.status} ${message}`)
      }
      return yield* new RuntimeRequestError({ status: response.status, message })
    })

  /**
   * Send a request with the transport's policies; a 2xx response is handed to `onOk`, a 4xx to
   * `refused` first (this call's own meaning of it, e.g. 404 "File not found" for a download).
   */
  const send: Send = (what, request, timeout, onOk, refused) =>
    sendOnce(what, request, timeout, onOk, refused, false).pipe(
      Effect.withSpan("ActionClient.send", { attributes: { endpoint: what } }, { captureStackTrace: false })
    )

  const jsonOf = (response: HttpClientResponse.HttpClientResponse) =>
    response.json.pipe(Effect.catch((e) => disconnected("reading a response", e.message)))

  return { baseUrl: options.baseUrl, send, disconnected, jsonOf }
}
