/**
 * Response helpers. Every error body is OpenHands' shape, `{"detail": "..."}`,
 * with a message that says what was wrong.
 */
import { Effect } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"

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

/** The JSON body, or a 400/413 that says why not. */
export const jsonBody = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const text = yield* request.text.pipe(
    Effect.mapError((error) =>
      error.reason._tag === "RequestParseError" && error.reason.reason === "BodyTooLarge"
        ? new BadRequest(413, "The request body is too large.")
        : new BadRequest(400, `Cannot read the request body: ${error.message}`)
    )
  )
  if (text.trim() === "") return yield* Effect.fail(new BadRequest(400, "The request body is empty; JSON expected."))
  try {
    return JSON.parse(text) as unknown
  } catch (error) {
    return yield* Effect.fail(new BadRequest(400, `The request body is not valid JSON: ${(error as Error).message}`))
  }
})

/** Query parameters of the current request. */
export const searchParams = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  return new URL(request.url, "http://server").searchParams
})

export const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)
