/**
 * An answer the lean client (leanClient.ts) has read whole, as an `HttpClientResponse`, so the
 * transport reads it as it reads Effect's: a web `Response` around it (`fromWeb`) cost ~20 µs
 * an action, as much as the rest of the lean path's bookkeeping. A body that failed to read fails
 * `arrayBuffer`, `text` and `json` with the `DecodeError` Effect's undici client gives then.
 */
import { Effect, Inspectable, Option, Pipeable, type Schema, Stream } from "effect"
import { Cookies, Headers, HttpClientError, type HttpClientRequest, HttpClientResponse } from "effect/http"
import { HttpIncomingMessage, UrlParams } from "effect/http"

/** What undici hands over: names in lower case, a repeated header as a list. */
export type AnswerHeaders = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

export class LeanResponse extends Inspectable.Class implements HttpClientResponse.HttpClientResponse {
  readonly [HttpIncomingMessage.TypeId] = HttpIncomingMessage.TypeId
  readonly [HttpClientResponse.TypeId] = HttpClientResponse.TypeId
  readonly request: HttpClientRequest.HttpClientRequest
  readonly status: number
  private readonly answerHeaders: AnswerHeaders
  /** The body's bytes, or why they could not be read. */
  private readonly body: { readonly bytes: Uint8Array } | { readonly cause: unknown }

  constructor(
    request: HttpClientRequest.HttpClientRequest,
    status: number,
    headers: AnswerHeaders,
    body: { readonly bytes: Uint8Array } | { readonly cause: unknown }
  ) {
    super()
    this.request = request
    this.status = status
    this.answerHeaders = headers
    this.body = body
  }

  private decodeError(cause: unknown) {
    return new HttpClientError.HttpClientError({
      reason: new HttpClientError.DecodeError({ request: this.request, response: this, cause })
    })
  }

  get url(): string {
    return this.request.url
  }

  get headers(): Headers.Headers {
    return Headers.fromInput(this.answerHeaders as Headers.Input)
  }

  get cookies(): Cookies.Cookies {
    const setCookie = this.answerHeaders["set-cookie"]
    return setCookie === undefined ? Cookies.empty : Cookies.fromSetCookie(setCookie)
  }

  get remoteAddress(): Option.Option<string> {
    return Option.none()
  }

  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpClientError.HttpClientError> {
    const { body } = this
    if (!("bytes" in body)) return Effect.fail(this.decodeError(body.cause))
    return Effect.succeed(new Uint8Array(body.bytes).buffer)
  }

  get text(): Effect.Effect<string, HttpClientError.HttpClientError> {
    const { body } = this
    return "bytes" in body
      ? Effect.succeed(Buffer.from(body.bytes.buffer, body.bytes.byteOffset, body.bytes.byteLength).toString("utf8"))
      : Effect.fail(this.decodeError(body.cause))
  }

  get json(): Effect.Effect<Schema.Json, HttpClientError.HttpClientError> {
    return Effect.flatMap(this.text, (text) =>
      Effect.try({
        try: (): Schema.Json => text === "" ? null : JSON.parse(text),
        catch: (cause) => this.decodeError(cause)
      }))
  }

  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpClientError.HttpClientError> {
    return Effect.map(this.text, (text) => UrlParams.fromInput(new URLSearchParams(text)))
  }

  get formData(): Effect.Effect<FormData, HttpClientError.HttpClientError> {
    return Effect.flatMap(this.arrayBuffer, (bytes) =>
      Effect.tryPromise({
        try: () => new Response(bytes, { headers: this.headers }).formData(),
        catch: (cause) => this.decodeError(cause)
      }))
  }

  get stream(): Stream.Stream<Uint8Array, HttpClientError.HttpClientError> {
    const { body } = this
    return "bytes" in body ? Stream.make(body.bytes) : Stream.fail(this.decodeError(body.cause))
  }

  get upgrade(): Effect.Effect<never, HttpClientError.HttpClientError> {
    return Effect.fail(
      new HttpClientError.HttpClientError({
        reason: new HttpClientError.StatusCodeError({
          request: this.request,
          response: this,
          description: "the lean client does not hand over connections"
        })
      })
    )
  }

  toJSON(): unknown {
    return HttpIncomingMessage.inspect(this, {
      _id: "HttpClientResponse",
      request: this.request.toJSON(),
      status: this.status
    })
  }

  pipe() {
    return Pipeable.pipeArguments(this, arguments)
  }
}
