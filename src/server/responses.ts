/**
 * Response helpers. Every error body is OpenHands' shape, `{"detail": "..."}`,
 * with a message that says what was wrong.
 */
import { ByteSize, Effect } from "effect"
import { HttpIncomingMessage, HttpServerRequest, HttpServerResponse } from "effect/http"

export const detail = (status: number, message: string) =>
  HttpServerResponse.jsonUnsafe({ detail: message }, { status })

/** A request that cannot be served as sent: answered with `status` and `message`. */
export class BadRequest {
  readonly _tag = "BadRequest"
  readonly status: number
  readonly message: string
  constructor(status: number, message: string) {
    this.status = status
    this.message = message
  }
}

/** Answer a failed handler: its own status for a `BadRequest`, else 500 as OpenHands does. */
export const failed = (error: BadRequest | { readonly message: string }) =>
  Effect.succeed(
    error instanceof BadRequest
      ? detail(error.status, error.message)
      : detail(500, `Internal server error: ${error.message}`)
  )

/** Largest JSON body accepted; uploads (multipart) are not limited by it. */
export const JSON_BODY_LIMIT_MIB = 64

const bodyText = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  return yield* request.text.pipe(
    Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.mebibytes(JSON_BODY_LIMIT_MIB)),
    Effect.mapError((error) =>
      error.reason._tag === "RequestParseError" && error.reason.reason === "BodyTooLarge"
        ? new BadRequest(413, `The request body is too large (the limit is ${JSON_BODY_LIMIT_MIB} MiB).`)
        : new BadRequest(400, `Cannot read the request body: ${error.message}`)
    )
  )
})

const parseJson = (text: string) =>
  Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: (error) => new BadRequest(400, `The request body is not valid JSON: ${(error as Error).message}`)
  })

/** The JSON body, or a 400/413 that says why not. */
export const jsonBody = Effect.flatMap(
  bodyText,
  (text) =>
    text.trim() === "" ? Effect.fail(new BadRequest(400, "The request body is empty; JSON expected.")) : parseJson(text)
)

/** The JSON body, or `fallback` when there is none (however it was sent, chunked included). */
export const optionalJsonBody = (fallback: unknown) =>
  Effect.flatMap(bodyText, (text) => text.trim() === "" ? Effect.succeed(fallback) : parseJson(text))

/** Query parameters of the current request. */
export const searchParams = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  return new URL(request.url, "http://server").searchParams
})

export { isRecord } from "../schema/wire.ts"
