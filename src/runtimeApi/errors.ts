/**
 * The one error a runtime API handler fails with: the HTTP status and the `detail` the client
 * reads (FastAPI's shape, as OpenHands' client expects), so every refusal says what was wrong.
 */
import { Data } from "effect"

export class ApiError extends Data.TaggedError("ApiError")<{
  readonly status: number
  readonly detail: string
}> {}

export const notFound = (what: string) => new ApiError({ status: 404, detail: `${what} not found` })
