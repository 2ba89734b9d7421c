/**
 * Requests decoded by Schema before a handler acts: a JSON body (read within the action server's
 * body limits, server/responses.ts), path parameters and queries. A bad one fails with a 400 whose
 * `detail` names each bad field and rule (never the value: a body may hold secrets).
 */
import { Effect, Schema } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { formatIssue } from "../schema/issues.ts"
import { BadRequest, detail, jsonBody, searchParams } from "../server/responses.ts"
import { ApiError } from "./errors.ts"

export const decodeAs =
  <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S, what: string) => (input: unknown) =>
    Schema.decodeUnknownEffect(schema)(input, { errors: "all" }).pipe(
      Effect.mapError((error) => new ApiError({ status: 400, detail: `Invalid ${what}: ${formatIssue(error.issue)}` }))
    )

const fromBadRequest = (error: BadRequest) => new ApiError({ status: error.status, detail: error.message })

/** The JSON body as `schema`. */
export const decodeBody = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S) =>
  jsonBody.pipe(Effect.mapError(fromBadRequest), Effect.flatMap(decodeAs(schema, "request body")))

/** The route's path parameters as `schema`. */
export const decodeParams = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S) =>
  Effect.flatMap(HttpRouter.params, decodeAs(schema, "path"))

/** The query as `schema` (each parameter's first value). */
export const decodeQuery = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S) =>
  Effect.flatMap(searchParams, (params) => decodeAs(schema, "query")(Object.fromEntries(params)))

/** Answer a failed handler with its status and `detail`. */
export const answerError = (error: ApiError) => Effect.succeed(detail(error.status, error.detail))

/** A JSON answer. */
export const json = (body: unknown) => HttpServerResponse.jsonUnsafe(body)
