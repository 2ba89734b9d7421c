/**
 * Response helpers. Every error body is OpenHands' shape, `{"detail": "..."}`,
 * with a message that says what was wrong.
 */
import { ByteSize, Effect } from "effect"
import { HttpIncomingMessage, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Limits, type TransferLimits } from "../executor/limits.ts"
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

/** What a failed handler answers: its own status for a `BadRequest`, else 500 as OpenHands does. */
export const failure = (error: BadRequest | { readonly message: string }): BadRequest =>
  error instanceof BadRequest ? error : new BadRequest(500, `Internal server error: ${error.message}`)

/**
 * Answer a failed handler (`failure`). A 413 also closes the connection, so the rest of a body too
 * large to read is never read.
 */
export const failed = (error: BadRequest | { readonly message: string }) => {
  const { message, status } = failure(error)
  return Effect.succeed(
    status === 413 ? HttpServerResponse.setHeader(detail(413, message), "connection", "close") : detail(status, message)
  )
}

const tooLarge = (limit: number) =>
  new BadRequest(
    413,
    `The request body is too large: it exceeds the JSON body limit of ${limit} bytes (send files with /upload_file).`
  )

/** The body's bytes, read no further than the JSON body limit (a declared length over it is refused before reading). */
const bodyBytes = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const limits = yield* Limits
  const declared = Number(request.headers["content-length"] ?? "0")
  if (declared > limits.jsonBodyBytes) return yield* Effect.fail(tooLarge(limits.jsonBodyBytes))
  return new Uint8Array(
    yield* request.arrayBuffer.pipe(
      Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(limits.jsonBodyBytes)),
      Effect.mapError((error) =>
        error.reason._tag === "RequestParseError" && error.reason.reason === "BodyTooLarge"
          ? tooLarge(limits.jsonBodyBytes)
          : new BadRequest(400, `Cannot read the request body: ${error.message}`)
      )
    )
  )
})

const decoder = new TextDecoder()

/** A body's text, once its bytes are within the nesting and container limits. */
const textOf = (bytes: Uint8Array, limits: TransferLimits): Effect.Effect<string, BadRequest> => {
  const problem = jsonShapeProblem(bytes, { depth: limits.jsonDepth, containers: limits.jsonContainers })
  return problem === undefined ? Effect.succeed(decoder.decode(bytes)) : Effect.fail(new BadRequest(400, problem))
}

const bodyText = Effect.gen(function*() {
  const bytes = yield* bodyBytes
  return yield* textOf(bytes, yield* Limits)
})

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

const nonEmptyJson = (text: string) =>
  text.trim() === "" ? Effect.fail(new BadRequest(400, "The request body is empty; JSON expected.")) : parseJson(text)

/** The JSON body, or a 400/413 that says why not. */
export const jsonBody = Effect.flatMap(bodyText, nonEmptyJson)

/** A body already read (within the JSON body limit) as JSON, or the 400 that says why not: `jsonBody`'s checks. */
export const jsonOfBytes = (bytes: Uint8Array, limits: TransferLimits) =>
  Effect.flatMap(textOf(bytes, limits), nonEmptyJson)

/** The JSON body, or `fallback` when there is none (however it was sent, chunked included). */
export const optionalJsonBody = (fallback: unknown) =>
  Effect.flatMap(bodyText, (text) => text.trim() === "" ? Effect.succeed(fallback) : parseJson(text))

/** Query parameters of the current request. */
export const searchParams = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  return new URL(request.url, "http://server").searchParams
})

export { isRecord } from "../schema/wire.ts"
