/**
 * Response helpers. Every error body is OpenHands' shape, `{"detail": "..."}`,
 * with a message that says what was wrong.
 */
import { ByteSize, Effect } from "effect"
import { HttpIncomingMessage, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Limits } from "../executor/limits.ts"
import { jsonShapeProblem } from "./jsonShape.ts"

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

/**
 * Answer a failed handler: its own status for a `BadRequest`, else 500 as OpenHands does.
 * A 413 also closes the connection, so the rest of a body too large to read is never read.
 */
export const failed = (error: BadRequest | { readonly message: string }) =>
  Effect.succeed(
    error instanceof BadRequest
      ? error.status === 413
        ? HttpServerResponse.setHeader(detail(413, error.message), "connection", "close")
        : detail(error.status, error.message)
      : detail(500, `Internal server error: ${error.message}`)
  )

const tooLarge = (limit: number) =>
  new BadRequest(
    413,
    `The request body is too large: it exceeds the JSON body limit of ${limit} bytes (send files with /upload_file).`
  )

/**
 * The body's bytes, read no further than the JSON body limit (a declared length over it
 * is refused before reading), and within the nesting and container limits.
 */
const bodyBytes = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const limits = yield* Limits
  const declared = Number(request.headers["content-length"] ?? "0")
  if (declared > limits.jsonBodyBytes) return yield* Effect.fail(tooLarge(limits.jsonBodyBytes))
  const bytes = new Uint8Array(
    yield* request.arrayBuffer.pipe(
      Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(limits.jsonBodyBytes)),
      Effect.mapError((error) =>
        error.reason._tag === "RequestParseError" && error.reason.reason === "BodyTooLarge"
          ? tooLarge(limits.jsonBodyBytes)
          : new BadRequest(400, `Cannot read the request body: ${error.message}`)
      )
    )
  )
  const problem = jsonShapeProblem(bytes, { depth: limits.jsonDepth, containers: limits.jsonContainers })
  if (problem !== undefined) return yield* Effect.fail(new BadRequest(400, problem))
  return bytes
})

const decoder = new TextDecoder()
const bodyText = Effect.map(bodyBytes, (bytes) => decoder.decode(bytes))

/**
 * `JSON.parse`'s message without the piece of the input V8 quotes in some of them
 * (`Unexpected token 's', "s3cret-val"... is not valid JSON`): a body may hold secrets (`/v1/env`,
 * `/start`'s environment). The token and the position say where it went wrong.
 */
const withoutInput = (message: string) => message.replace(/, (?:\.\.\.)?".*$/s, "")

const parseJson = (text: string) =>
  Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: (error) =>
      new BadRequest(400, `The request body is not valid JSON: ${withoutInput((error as Error).message)}`)
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
