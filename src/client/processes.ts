/**
 * Background processes over HTTP: the action server's `/v1/processes` endpoints as a
 * `ProcessControl`, with the transport's policies (the client's `send`). A 404 is the
 * server saying the process is unknown (`ProcessNotFoundError`), a 400 a refusal
 * (`ProcessError`); the output is the NDJSON body, decoded line by line as it arrives.
 */
import { Duration, Effect, Schema, Stream } from "effect"
import { type HttpClientError, HttpClientRequest, type HttpClientResponse } from "effect/http"
import type { RuntimeDisconnectedError, RuntimeError } from "../schema/errors.ts"
import { formatIssue } from "../schema/issues.ts"
import {
  ProcessError,
  ProcessExit,
  ProcessNotFoundError,
  ProcessOutput,
  type ProcessSpec,
  ProcessStarted
} from "../schema/process.ts"
import type { ProcessControl } from "../services/Processes.ts"
import { REQUEST_TIMEOUTS } from "./policies.ts"

/** The client's request function (ActionClient's `send`): policies, status codes, typed errors. */
export type Send = <A, E, F = never>(
  what: string,
  request: HttpClientRequest.HttpClientRequest,
  timeout: Duration.Duration,
  onOk: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, E>,
  refused?: (status: number, message: string) => F | undefined
) => Effect.Effect<A, E | F | RuntimeError>

export interface ProcessTransport {
  readonly baseUrl: string
  readonly send: Send
  /** A broken response: the server is gone (sets the runtime's status). */
  readonly disconnected: (what: string, cause: string) => Effect.Effect<never, RuntimeDisconnectedError>
}

/** One NDJSON line of `GET /v1/processes/{id}/output`. */
const OutputLine = Schema.Union([
  Schema.Struct({ type: Schema.Literal("output"), ...ProcessOutput.fields }),
  Schema.Struct({ type: Schema.Literal("exit"), ...ProcessExit.fields })
])
const decodeLine = Schema.decodeUnknownEffect(Schema.fromJsonString(OutputLine))

const path = (id: string, rest = "") => `/v1/processes/${encodeURIComponent(id)}${rest}`

/** A 404: the server does not hold process `id`. */
const unknown = (id: string) => (status: number, message: string) =>
  status === 404 ? new ProcessNotFoundError({ id, message }) : undefined
/** A 400: the server refused the request (the message says why). */
const refused = (status: number, message: string) => status === 400 ? new ProcessError({ message }) : undefined
const refusedFor = (id: string) => (status: number, message: string) =>
  unknown(id)(status, message) ?? refused(status, message)

export const makeProcessClient = ({ baseUrl, disconnected, send }: ProcessTransport): ProcessControl<RuntimeError> => {
  /** A 404 on start is a server without the endpoints (OpenHands' own, an older one): alive, just without processes. */
  const startRefused = (status: number, message: string) =>
    status === 404
      ? new ProcessError({
        message: `The action server at ${baseUrl} has no POST /v1/processes (an OpenHands or older server): ` +
          "it cannot run background processes."
      })
      : refused(status, message)

  const decodeBody =
    <S extends Schema.Top & { readonly DecodingServices: never }>(what: string, schema: S) =>
    (response: HttpClientResponse.HttpClientResponse) =>
      response.json.pipe(
        Effect.flatMap(Schema.decodeUnknownEffect(schema)),
        Effect.catch((e) =>
          disconnected(
            what,
            `the server sent an invalid answer: ${e._tag === "SchemaError" ? formatIssue(e.issue) : e.message}`
          )
        )
      )

  /** A request whose answer is only its status. */
  const command = <F>(
    what: string,
    request: HttpClientRequest.HttpClientRequest,
    refusal: (status: number, message: string) => F | undefined
  ) => send(what, request, REQUEST_TIMEOUTS.process, () => Effect.void, refusal)

  const outputOf = (response: HttpClientResponse.HttpClientResponse) =>
    response.stream.pipe(
      Stream.decodeText(),
      Stream.splitLines,
      Stream.filter((line) => line.trim() !== ""),
      Stream.mapEffect((line) => decodeLine(line)),
      Stream.takeWhile((line) => line.type === "output"),
      Stream.map(({ stream, text }) => ({ stream, text }) as ProcessOutput),
      Stream.catch((e: HttpClientError.HttpClientError | Schema.SchemaError) =>
        Stream.fromEffect(
          disconnected(
            "process output",
            e._tag === "SchemaError" ? `the server sent an invalid output line: ${formatIssue(e.issue)}` : e.message
          )
        )
      )
    )

  return {
    start: (spec: ProcessSpec) =>
      send(
        "process start",
        HttpClientRequest.post("/v1/processes").pipe(HttpClientRequest.bodyJsonUnsafe(spec)),
        REQUEST_TIMEOUTS.process,
        decodeBody("process start", ProcessStarted),
        startRefused
      ),
    output: (id) =>
      send(
        "process output",
        HttpClientRequest.get(path(id, "/output")),
        REQUEST_TIMEOUTS.process,
        (response) => Effect.succeed(outputOf(response)),
        unknown(id)
      ),
    write: (id, text) =>
      command(
        "process stdin",
        HttpClientRequest.post(path(id, "/stdin")).pipe(HttpClientRequest.bodyJsonUnsafe({ text })),
        refusedFor(id)
      ),
    closeStdin: (id) => command("process stdin", HttpClientRequest.delete(path(id, "/stdin")), unknown(id)),
    signal: (id, signal) =>
      command(
        "process signal",
        HttpClientRequest.post(path(id, "/signal")).pipe(HttpClientRequest.bodyJsonUnsafe({ signal })),
        refusedFor(id)
      ),
    // The server answers at the exit, however long the process runs; interrupting the wait aborts the request.
    wait: (id) =>
      send(
        "process wait",
        HttpClientRequest.get(path(id, "/wait")),
        Duration.infinity,
        decodeBody("process wait", ProcessExit),
        unknown(id)
      ),
    remove: (id) => command("process removal", HttpClientRequest.delete(path(id)), unknown(id))
  }
}
