/**
 * Background processes over HTTP (`Runtime.spawn` on the runtimes that run this server):
 * `POST /v1/processes` starts one, `GET …/{id}/output` streams its output as NDJSON (what
 * is kept first, then as it comes, then `{"type": "exit", ...}`), `POST …/{id}/stdin`,
 * `DELETE …/{id}/stdin` (end of input), `POST …/{id}/signal`, `GET …/{id}/wait` (answers
 * at the exit) and `DELETE …/{id}` (kill it and its tree, forget it). An unknown id is
 * 404 with the reason, a refused request 400; all behind the session key (auth.ts).
 */
import { Effect, Schema, Stream } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { formatIssue } from "../../schema/issues.ts"
import { ProcessError, ProcessExit, ProcessNotFoundError, ProcessSpec, ProcessStarted } from "../../schema/process.ts"
import { ActionExecutor } from "../../services/ActionExecutor.ts"
import { BadRequest, failed, isRecord, jsonBody } from "../responses.ts"
import { ENDPOINTS } from "./paths.ts"

const encoder = new TextEncoder()
const ndjson = (value: unknown) => encoder.encode(`${JSON.stringify(value)}\n`)

/** 404 for an unknown process, 400 for a refused request: the message says which and why. */
const refusal = (error: ProcessNotFoundError | ProcessError) =>
  new BadRequest(error instanceof ProcessNotFoundError ? 404 : 400, error.message)

const decodeSpec = (body: unknown) =>
  Schema.decodeUnknownEffect(ProcessSpec)(body).pipe(
    Effect.mapError((e) => new BadRequest(400, `Invalid process: ${formatIssue(e.issue)}`))
  )

/** The string field `name` of a JSON object body, or a 400 that shows the expected body. */
const stringField = (name: string) =>
  Effect.flatMap(jsonBody, (body) =>
    isRecord(body) && typeof body[name] === "string"
      ? Effect.succeed(body[name])
      : Effect.fail(new BadRequest(400, `The body must be a JSON object {"${name}": "..."}.`)))

const processId = Effect.map(HttpRouter.params, (params) => params["id"] ?? "")

const ok = HttpServerResponse.jsonUnsafe({ detail: "OK" })

export const processRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const { processes } = yield* ActionExecutor
  /** Register `handler` for `endpoint`; its errors become 400/404 answers. */
  const route = <R>(
    endpoint: readonly ["GET" | "POST" | "DELETE", `/v1/processes${string}`],
    handler: (
      id: string
    ) => Effect.Effect<HttpServerResponse.HttpServerResponse, BadRequest | ProcessNotFoundError | ProcessError, R>
  ) =>
    router.add(
      ...endpoint,
      Effect.flatMap(processId, handler).pipe(
        Effect.mapError((e) => e instanceof BadRequest ? e : refusal(e)),
        Effect.catch(failed)
      )
    )

  yield* route(ENDPOINTS.processStart, () =>
    Effect.gen(function*() {
      const spec = yield* Effect.flatMap(jsonBody, decodeSpec)
      const started = yield* processes.start(spec)
      return HttpServerResponse.jsonUnsafe(Schema.encodeSync(ProcessStarted)(started))
    }))
  yield* route(ENDPOINTS.processOutput, (id) =>
    Effect.map(processes.output(id), (output) =>
      HttpServerResponse.stream(
        output.pipe(
          Stream.map((chunk) => ndjson({ type: "output", ...chunk })),
          // The exit line, unless the process was removed meanwhile (then the stream just ends).
          Stream.concat(
            Stream.fromEffect(processes.wait(id)).pipe(
              Stream.map((exit) => ndjson({ type: "exit", ...Schema.encodeSync(ProcessExit)(exit) })),
              Stream.catch(() => Stream.empty)
            )
          )
        ),
        { contentType: "application/x-ndjson" }
      )))
  yield* route(ENDPOINTS.processStdin, (id) =>
    Effect.gen(function*() {
      const text = yield* stringField("text")
      yield* processes.write(id, text)
      return ok
    }))
  yield* route(ENDPOINTS.processCloseStdin, (id) => Effect.as(processes.closeStdin(id), ok))
  yield* route(ENDPOINTS.processSignal, (id) =>
    Effect.gen(function*() {
      const signal = yield* stringField("signal")
      yield* processes.signal(id, signal)
      return ok
    }))
  yield* route(
    ENDPOINTS.processWait,
    (id) =>
      Effect.map(processes.wait(id), (exit) => HttpServerResponse.jsonUnsafe(Schema.encodeSync(ProcessExit)(exit)))
  )
  yield* route(ENDPOINTS.processRemove, (id) => Effect.as(processes.remove(id), ok))
}))
