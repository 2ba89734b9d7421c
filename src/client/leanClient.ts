/**
 * `POST /execute_action` over undici directly, when the HTTP client in use is the default one
 * (`layerHttpClient`, which every HTTP runtime provides): an agent's every step is one, and
 * Effect's `HttpClient` (its span, URL parse, request wrappers and the platform adapter) costs
 * about as much client CPU as the exchange itself (docs/design-notes.md, "The lean path").
 *
 * The request is the one the transport built, prepared the same way (the provider's proxy
 * headers, the base URL, the session key: `prepare`) and sent with the headers in the same order,
 * the trace propagation headers last, as Effect's client adds them. The answer is an ordinary
 * `HttpClientResponse` (leanResponse.ts), and a failure the same `HttpClientError`, so the transport's
 * policies, statuses and typed errors (transport.ts) read it exactly as before. It falls back to
 * Effect's client for a request whenever what Effect's client would do is observable:
 * - a tracer other than Effect's native one (spans are exported): Effect's client records its
 *   client span with the redacted headers;
 * - an `HttpClient` the user provided (not one `layerHttpClient` made, nor one derived from it by
 *   `withServerHeaders`): it is used for everything, as before;
 * - undici's request options set around the call (`NodeHttpClient.UndiciOptions`), which Effect's
 *   client passes on to undici with each request.
 * Without an exporting tracer the client span is made as Effect's client makes it (a native span,
 * for the propagation headers), and nothing else of it is observable.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Pool } from "@effect/platform-node/Undici"
import { Effect, Layer, Tracer } from "effect"
import { HttpClient, HttpClientError, HttpClientRequest, type HttpClientResponse, HttpTraceContext } from "effect/http"
import { LeanResponse } from "./leanResponse.ts"

/** Clients `layerHttpClient` made, and those `withServerHeaders` derived from them. */
const defaults = new WeakSet<HttpClient.HttpClient>()

/** Mark `derived` as the default client when `source` is (serverHeaders.ts). */
export const inheritDefault = (source: HttpClient.HttpClient, derived: HttpClient.HttpClient) => {
  if (defaults.has(source)) defaults.add(derived)
  return derived
}

/** The HTTP runtimes' client: Effect's over undici, marked as the default. */
export const layerHttpClient: Layer.Layer<HttpClient.HttpClient> = Layer.effect(
  HttpClient.HttpClient,
  Effect.map(HttpClient.HttpClient, (client) => {
    defaults.add(client)
    return client
  })
).pipe(Layer.provide(NodeHttpClient.layerUndici))

/** One exchange on `pool`: the whole answer as an `HttpClientResponse`, or Effect's `TransportError`. */
const exchange = (pool: Pool, request: HttpClientRequest.HttpClientRequest, path: string) =>
  Effect.callback<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError>((resume) => {
    const controller = new AbortController()
    const transportError = (cause: unknown) =>
      resume(Effect.fail(
        new HttpClientError.HttpClientError({ reason: new HttpClientError.TransportError({ request, cause }) })
      ))
    const sent = request.body._tag === "Uint8Array" ? request.body.body : null
    pool.request({
      method: request.method,
      path,
      headers: request.headers,
      body: sent,
      signal: controller.signal,
      // As Effect's client: the transport's own timeouts bound the exchange.
      headersTimeout: 60 * 60 * 1000,
      bodyTimeout: 0
    }).then(
      (answer) => {
        const answered = (body: { readonly bytes: Uint8Array } | { readonly cause: unknown }) =>
          resume(Effect.succeed(new LeanResponse(request, answer.statusCode, answer.headers, body)))
        answer.body.bytes().then((bytes) => answered({ bytes }), (cause: unknown) => answered({ cause }))
      },
      transportError
    )
    return Effect.sync(() => controller.abort())
  })

/**
 * For `client` as the transport holds it: a client that sends over a pool of its own to `baseUrl`'s
 * origin (closed with the scope) when `base` is the default, else `client` itself. `prepare` is
 * what `client` does to a request before sending it (base URL, session key).
 */
export const leanClient = Effect.fn("ActionClient.leanClient")(function*(
  base: HttpClient.HttpClient,
  client: HttpClient.HttpClient,
  baseUrl: string,
  prepare: (request: HttpClientRequest.HttpClientRequest) => HttpClientRequest.HttpClientRequest
) {
  if (!defaults.has(base)) return client
  const origin = new URL(baseUrl).origin
  const pool = yield* Effect.acquireRelease(
    Effect.sync(() => new Pool(origin)),
    (opened) => Effect.promise(() => opened.destroy())
  )
  const lean = (request: HttpClientRequest.HttpClientRequest) =>
    Effect.withFiber<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError>((fiber) => {
      if (
        fiber.getRef(Tracer.Tracer) !== Tracer.nativeTracer ||
        Object.keys(fiber.getRef(NodeHttpClient.UndiciOptions)).length > 0
      ) return client.execute(request)
      return Effect.flatMap(base.preprocess(request), (preprocessed) => {
        const prepared = prepare(preprocessed)
        const url = new URL(prepared.url)
        const path = url.pathname + url.search
        // Effect's client's span and propagation headers, under the same conditions.
        if (fiber.getRef(Tracer.DisablePropagation) || fiber.getRef(HttpClient.TracerDisabledWhen)(prepared)) {
          return exchange(pool, prepared, path)
        }
        return Effect.useSpan(
          fiber.getRef(HttpClient.SpanNameGenerator)(prepared),
          { kind: "client" },
          (span) =>
            exchange(
              pool,
              fiber.getRef(HttpClient.TracerPropagationEnabled)
                ? HttpClientRequest.setHeaders(prepared, HttpTraceContext.toHeaders(span))
                : prepared,
              path
            )
        )
      })
    })
  const leaned: HttpClient.HttpClient = HttpClient.makeWith(
    (request: Effect.Effect<HttpClientRequest.HttpClientRequest, HttpClientError.HttpClientError>) =>
      Effect.flatMap(request, lean),
    Effect.succeed
  )
  return leaned
})
