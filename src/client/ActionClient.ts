/**
 * The HTTP transport: an action server's base URL and session key become a
 * `RuntimeBackend` (and so, through `makeRuntime`, a `Runtime`). Used by every
 * runtime that runs the executor out of process.
 *
 * - waits for `/alive` with `aliveSchedule`;
 * - retries only requests that never reached a handler (429, connection refused);
 * - gives an action its timeout + 5 s on the wire (`RuntimeTimeoutError` after);
 * - turns a dropped connection or dead server into `RuntimeDisconnectedError` and
 *   sets the status to ERROR_RUNTIME_DISCONNECTED;
 * - interrupting a request aborts it, and the server stops what it started.
 */
import { Duration, Effect, Redacted, Schedule, Schema, Stream } from "effect"
import { HttpClient, type HttpClientError, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { openAsBlob } from "node:fs"
import { open } from "node:fs/promises"
import type { StatusCell } from "../runtime/statusCell.ts"
import { withUploadPayload } from "../runtime/uploadPayload.ts"
import type { Action } from "../schema/Action.ts"
import {
  RuntimeDisconnectedError,
  RuntimeRequestError,
  RuntimeStartError,
  RuntimeTimeoutError,
  TransferError
} from "../schema/errors.ts"
import { formatIssue } from "../schema/issues.ts"
import { McpToolList } from "../schema/McpTool.ts"
import type { Observation } from "../schema/Observation.ts"
import { decodeObservation, encodeAction, isRecord } from "../schema/wire.ts"
import type { RuntimeInfo } from "../services/Runtime.ts"
import type { RuntimeBackend } from "../services/RuntimeBackend.ts"
import { redactingHeaders, SESSION_KEY_HEADER } from "../telemetry/secretHeaders.ts"
import {
  actionHttpTimeout,
  ALIVE_ATTEMPT_TIMEOUT,
  aliveSchedule,
  DEFAULT_ALIVE_TIMEOUT,
  REQUEST_TIMEOUTS,
  retrySchedule
} from "./policies.ts"
import { makeProcessClient } from "./processes.ts"

export interface ActionClientOptions {
  /** e.g. `http://127.0.0.1:41237` */
  readonly baseUrl: string
  readonly sessionApiKey?: Redacted.Redacted<string> | undefined
  readonly info: RuntimeInfo
  readonly defaultTimeoutSeconds: number
  readonly status: StatusCell
  /** How long to wait for `/alive` (default 120 s). */
  readonly aliveTimeout?: Duration.Input
  /** What the provisioner knows about a lost server (e.g. "killed for exceeding its memory limit"). */
  readonly explainDisconnect?: Effect.Effect<string | undefined>
  /** Re-sends of requests that never reached a handler (default `retrySchedule`). */
  readonly retrySchedule?: Schedule.Schedule<unknown> | undefined
  /**
   * True once the provisioner saw the sandbox stop. Nothing is sent after that, retries
   * included: a container's bridge IP or a pod's IP is handed to the next sandbox that starts,
   * which would otherwise receive this session's key with the next request.
   */
  readonly sandboxGone?: () => boolean
  /**
   * The provisioner's reading of a 404 or 5xx answer, where a proxy before the server means more
   * than "gone" (a remote runtime's 503: paused). Undefined keeps the default disconnect.
   */
  readonly serverError?: ServerErrorHook | undefined
}

/** What a `ServerErrorHook` decides: send the request again (once), or disconnect with this message. */
export type ServerErrorVerdict =
  | { readonly _tag: "Retry" }
  | { readonly _tag: "Disconnected"; readonly message: string }

/**
 * Read a 404 or 5xx answer: `status`, the answer's `detail`, and whether this request was already
 * sent again after a `Retry` (a second `Retry` is not honoured).
 */
export type ServerErrorHook = (answer: {
  readonly status: number
  readonly detail: string
  readonly retried: boolean
}) => Effect.Effect<ServerErrorVerdict | undefined>

/** The response's `{"detail": ...}` text, or its raw body. */
const detailOf = (response: HttpClientResponse.HttpClientResponse) =>
  response.text.pipe(
    Effect.map((text) => {
      try {
        const json = JSON.parse(text)
        return typeof json?.detail === "string" ? json.detail : text
      } catch {
        return text
      }
    }),
    Effect.orElseSucceed(() => "")
  )

/** Connection refused: the request never reached a server, so sending it again is safe. */
const neverDelivered = (error: HttpClientError.HttpClientError) =>
  error.reason._tag === "TransportError" && /ECONNREFUSED/.test(error.message)

/** A refused upload or download (bad destination, missing file, over a limit) is the caller's problem, not the server's. */
const transferRefused = (status: number, message: string) =>
  status === 400 || status === 404 || status === 413 ? new TransferError({ message }) : undefined

/** OpenHands' text for a request that outlived its budget. */
const timedOut = (what: string, timeout: Duration.Duration) =>
  new RuntimeTimeoutError({
    message: `Runtime failed to return ${what} before the requested timeout of ${Duration.toSeconds(timeout)}s`
  })

class Retryable {
  readonly _tag = "Retryable"
}

/** The request was not sent: the sandbox is known to have stopped (`sandboxGone`). */
class NotSent {
  readonly _tag = "NotSent"
}

export const makeActionClient = (
  options: ActionClientOptions
): Effect.Effect<RuntimeBackend, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const base = (yield* HttpClient.HttpClient).pipe(
      HttpClient.mapRequest((request) => {
        const withUrl = HttpClientRequest.prependUrl(request, options.baseUrl)
        return options.sessionApiKey === undefined
          ? withUrl
          : HttpClientRequest.setHeader(withUrl, SESSION_KEY_HEADER, Redacted.value(options.sessionApiKey))
      }),
      redactingHeaders([SESSION_KEY_HEADER])
    )

    /** Fail with `message`, marking the runtime disconnected (a more specific ERROR_MEMORY set by the provisioner stays). */
    const disconnectedWith = (message: string): Effect.Effect<never, RuntimeDisconnectedError> =>
      options.status.update((s) => s === "ERROR_MEMORY" ? s : "ERROR_RUNTIME_DISCONNECTED").pipe(
        Effect.andThen(Effect.fail(new RuntimeDisconnectedError({ message })))
      )

    const disconnected = (what: string, cause: string): Effect.Effect<never, RuntimeDisconnectedError> =>
      Effect.gen(function*() {
        const why = options.explainDisconnect === undefined ? undefined : yield* options.explainDisconnect
        return yield* disconnectedWith(
          `The action server at ${options.baseUrl} stopped answering (${what}): ${why ?? cause}. ` +
            "Its session is lost; start a new runtime."
        )
      })

    /** One attempt; 429 and refused connections (never delivered) are worth retrying. */
    const attempt = (
      request: HttpClientRequest.HttpClientRequest
    ): Effect.Effect<HttpClientResponse.HttpClientResponse, Retryable | NotSent | HttpClientError.HttpClientError> =>
      // Suspended: a retry runs it again, and must see the sandbox gone in between.
      Effect.suspend((): Effect.Effect<
        HttpClientResponse.HttpClientResponse,
        Retryable | NotSent | HttpClientError.HttpClientError
      > =>
        options.sandboxGone?.() === true ? Effect.fail(new NotSent()) : base.execute(request).pipe(
          Effect.catch((error): Effect.Effect<never, Retryable | HttpClientError.HttpClientError> =>
            neverDelivered(error) ? Effect.fail(new Retryable()) : Effect.fail(error)
          ),
          Effect.flatMap((response) =>
            response.status === 429 ? Effect.fail(new Retryable()) : Effect.succeed(response)
          )
        )
      )

    /**
     * Send a request with the transport's policies; a 2xx response is handed to `onOk`.
     * 5xx and 404 mean the server (or a proxy before it) is gone, as in OpenHands' client.
     */
    const send = <A, E, F = never>(
      what: string,
      request: HttpClientRequest.HttpClientRequest,
      timeout: Duration.Duration,
      onOk: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, E>,
      /** This call's own meaning of a 4xx (e.g. 404 "File not found" for a download). */
      refused?: (status: number, message: string) => F | undefined,
      /** Sent again after the `serverError` hook's `Retry`. */
      retried = false
    ): Effect.Effect<A, E | F | RuntimeDisconnectedError | RuntimeTimeoutError | RuntimeRequestError> =>
      Effect.gen(function*() {
        const response = yield* attempt(request).pipe(
          Effect.retry({ schedule: options.retrySchedule ?? retrySchedule, while: (e) => e instanceof Retryable }),
          Effect.catch((e) =>
            disconnected(
              what,
              e instanceof Retryable
                ? "the server kept refusing the request"
                : e instanceof NotSent
                ? "the sandbox has stopped"
                : e.message
            )
          ),
          Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.fail(timedOut(what, timeout)) })
        )
        if (response.status >= 200 && response.status < 300) return yield* onOk(response)
        const message = yield* detailOf(response)
        const own = response.status < 500 ? refused?.(response.status, message) : undefined
        if (own !== undefined) return yield* Effect.fail(own)
        if ((response.status === 401 || response.status === 403) && options.explainDisconnect !== undefined) {
          // Our key refused: once the sandbox has stopped, whoever answered is not its server (a
          // freed host port taken by another listener), so the session is lost, not the request bad.
          const why = yield* options.explainDisconnect
          if (why !== undefined) return yield* disconnected(what, why)
        }
        if (response.status >= 500 || response.status === 404) {
          const verdict = options.serverError === undefined
            ? undefined
            : yield* options.serverError({ status: response.status, detail: message, retried })
          if (verdict?._tag === "Retry" && !retried) return yield* send(what, request, timeout, onOk, refused, true)
          if (verdict?._tag === "Disconnected") return yield* disconnectedWith(verdict.message)
          return yield* disconnected(what, `HTTP ${response.status} ${message}`)
        }
        return yield* new RuntimeRequestError({ status: response.status, message })
      })

    const jsonOf = (response: HttpClientResponse.HttpClientResponse) =>
      response.json.pipe(Effect.catch((e) => disconnected("reading a response", e.message)))

    /** One line of the NDJSON stream: output goes to `onOutput`; the observation is returned. */
    const streamEvent = (
      line: string,
      onOutput: (text: string) => void
    ): Effect.Effect<Observation | undefined, RuntimeDisconnectedError> => {
      const what = "execute_action/stream"
      let event: unknown
      try {
        event = JSON.parse(line)
      } catch {
        return disconnected(what, "the server sent a line that is not JSON")
      }
      if (!isRecord(event)) return disconnected(what, "the server sent an event that is not a JSON object")
      if (event["type"] === "output" && typeof event["text"] === "string") {
        onOutput(event["text"])
        return Effect.succeed(undefined)
      }
      if (event["type"] === "observation") {
        return decodeObservation(event["observation"]).pipe(
          Effect.catch((e) => disconnected(what, `the server sent an invalid observation: ${e.message}`))
        )
      }
      // The executor failed (its shell could not restart): `run` gets a 500 for it.
      if (event["type"] === "error") return disconnected(what, `HTTP 500 ${String(event["detail"])}`)
      return disconnected(what, `the server sent an unknown event type ${JSON.stringify(event["type"])}`)
    }

    /** The events of a streamed action, in order, until the observation (a stream ending without one was cut). */
    const readStream = (response: HttpClientResponse.HttpClientResponse, onOutput: (text: string) => void) =>
      response.stream.pipe(
        Stream.decodeText,
        Stream.splitLines,
        Stream.filter((line) => line.trim() !== ""),
        Stream.mapEffect((line) => streamEvent(line, onOutput)),
        Stream.filter((observation) => observation !== undefined),
        Stream.runHead,
        Effect.catchTag("HttpClientError", (e) => disconnected("execute_action/stream", e.message)),
        Effect.flatMap((head) =>
          head._tag === "Some"
            ? Effect.succeed(head.value)
            : disconnected("execute_action/stream", "the stream ended before the observation")
        )
      )

    /** A server without the endpoint (OpenHands' own, an older one) is alive: it just cannot stream. */
    const noStreaming = (status: number) =>
      status === 404
        ? new RuntimeRequestError({
          status,
          message: `The action server at ${options.baseUrl} has no POST /v1/execute_action/stream (an OpenHands or ` +
            "older server): it cannot stream output; run still works."
        })
        : undefined

    /**
     * With `onOutput`, the streaming endpoint: its answer starts at once, so the action's wire
     * timeout covers reading it to the end; interrupting closes the connection, which stops the action.
     */
    const executeStreaming = (action: Action, onOutput: (text: string) => void) => {
      const timeout = actionHttpTimeout(action, options.defaultTimeoutSeconds)
      return send(
        "execute_action/stream",
        HttpClientRequest.post("/v1/execute_action/stream").pipe(
          HttpClientRequest.bodyJsonUnsafe({ action: encodeAction(action) })
        ),
        timeout,
        (response) => readStream(response, onOutput),
        noStreaming
      ).pipe(
        Effect.timeoutOrElse({
          duration: timeout,
          orElse: () => Effect.fail(timedOut("execute_action/stream", timeout))
        })
      )
    }

    const execute = (action: Action, onOutput?: (text: string) => void) =>
      onOutput !== undefined ? executeStreaming(action, onOutput) : send(
        "execute_action",
        HttpClientRequest.post("/execute_action").pipe(
          HttpClientRequest.bodyJsonUnsafe({ action: encodeAction(action) })
        ),
        actionHttpTimeout(action, options.defaultTimeoutSeconds),
        (response) =>
          jsonOf(response).pipe(
            Effect.flatMap((json) =>
              decodeObservation(json).pipe(
                Effect.catch((e) =>
                  disconnected("execute_action", `the server sent an invalid observation: ${e.message}`)
                )
              )
            )
          )
      )

    const copyTo = (hostSource: string, sandboxDest: string, recursive: boolean) =>
      withUploadPayload(hostSource, recursive, (payload) =>
        Effect.gen(function*() {
          // A file-backed Blob: the form is streamed from disk, not read into memory.
          const file = yield* Effect.tryPromise({
            try: () => openAsBlob(payload.source),
            catch: (cause) => new TransferError({ message: `Cannot read ${hostSource}: ${String(cause)}` })
          })
          const form = new FormData()
          form.append("file", file, payload.filename)
          return yield* send(
            "upload_file",
            HttpClientRequest.post("/upload_file").pipe(
              HttpClientRequest.setUrlParams({ destination: sandboxDest, recursive: String(payload.recursive) }),
              HttpClientRequest.bodyFormData(form)
            ),
            REQUEST_TIMEOUTS.upload,
            () => Effect.void,
            transferRefused
          )
        }))

    /** Stream a response's body into `path`, chunk by chunk, each written before the next is read. */
    const saveBody = (response: HttpClientResponse.HttpClientResponse, path: string) =>
      Effect.acquireUseRelease(
        Effect.tryPromise({
          try: () => open(path, "w"),
          catch: (cause) => new TransferError({ message: `Cannot write ${path}: ${String(cause)}` })
        }),
        (handle) =>
          response.stream.pipe(
            Stream.runForEach((chunk) =>
              Effect.tryPromise({
                try: () => handle.write(chunk),
                catch: (cause) => new TransferError({ message: `Cannot write ${path}: ${String(cause)}` })
              })
            ),
            Effect.catchTag("HttpClientError", (e) => disconnected("download_files", e.message))
          ),
        (handle) => Effect.promise(() => handle.close())
      )

    const copyFrom = (sandboxPath: string, hostZipPath: string) =>
      send(
        "download_files",
        HttpClientRequest.get("/download_files").pipe(HttpClientRequest.setUrlParams({ path: sandboxPath })),
        REQUEST_TIMEOUTS.download,
        (response) => saveBody(response, hostZipPath),
        transferRefused
      )

    const listFiles = (path?: string) =>
      send(
        "list_files",
        HttpClientRequest.post("/list_files").pipe(
          HttpClientRequest.bodyJsonUnsafe(path === undefined ? {} : { path })
        ),
        REQUEST_TIMEOUTS.list,
        (response) =>
          jsonOf(response).pipe(
            Effect.map((json) => Array.isArray(json) ? json.filter((n): n is string => typeof n === "string") : [])
          )
      )

    /** A server without the endpoint (OpenHands' own, an older one) is alive: it just cannot list. */
    const noListing = (status: number) =>
      status === 404
        ? new RuntimeRequestError({
          status,
          message: `The action server at ${options.baseUrl} has no GET /v1/mcp/tools (an OpenHands or older ` +
            "server): it cannot list MCP tools; callTool still works."
        })
        : undefined

    const listTools = send(
      "mcp/tools",
      HttpClientRequest.get("/v1/mcp/tools"),
      REQUEST_TIMEOUTS.mcpTools,
      (response) =>
        jsonOf(response).pipe(
          Effect.flatMap(Schema.decodeUnknownEffect(McpToolList)),
          Effect.map((body) => body.tools),
          Effect.catchTag(
            "SchemaError",
            (e) => disconnected("mcp/tools", `the server sent an invalid tool list: ${formatIssue(e.issue)}`)
          )
        ),
      noListing
    )

    /** `secrets` go only when there are some: a server that does not know them masks nothing, the client still does. */
    const setEnv = (vars: Readonly<Record<string, string>>, secrets: ReadonlyArray<string>) =>
      send(
        "env",
        HttpClientRequest.post("/v1/env").pipe(
          HttpClientRequest.bodyJsonUnsafe(secrets.length === 0 ? { vars } : { vars, secrets })
        ),
        REQUEST_TIMEOUTS.env,
        () => Effect.void
      )

    return {
      info: options.info,
      defaultTimeoutSeconds: options.defaultTimeoutSeconds,
      execute,
      copyTo,
      copyFrom,
      listFiles,
      listTools,
      setEnv,
      processes: makeProcessClient({ baseUrl: options.baseUrl, send, disconnected })
    } satisfies RuntimeBackend
  })

/** The wait's end, distinct from an attempt's failure: the time budget ran out. */
class BudgetSpent {
  readonly _tag = "BudgetSpent"
}

/**
 * Wait until the server answers `/alive` with a 2xx, or fail with `RuntimeStartError`: when the
 * time budget runs out, or earlier when `schedule` (default `aliveSchedule`, which never ends) ends.
 */
export const waitUntilAlive = (
  baseUrl: string,
  timeout: Duration.Input = DEFAULT_ALIVE_TIMEOUT,
  schedule: Schedule.Schedule<unknown> = aliveSchedule
): Effect.Effect<void, RuntimeStartError, HttpClient.HttpClient> =>
  HttpClient.get(`${baseUrl}/alive`).pipe(
    // docker-proxy accepts before the server inside listens, then resets or stalls the
    // connection: any failure, or no answer within the attempt's budget, means "not yet".
    Effect.flatMap((response) => response.status < 300 ? Effect.void : Effect.fail(response)),
    Effect.timeout(ALIVE_ATTEMPT_TIMEOUT),
    Effect.retry(schedule),
    Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.fail(new BudgetSpent()) }),
    Effect.mapError((error) =>
      new RuntimeStartError({
        message: `The action server at ${baseUrl} did not answer /alive ${
          error instanceof BudgetSpent
            ? `within ${Duration.format(Duration.fromInputUnsafe(timeout))}`
            : "before its wait schedule (schedules.waitUntilAlive) ended"
        }. Check its log for a start-up error.`
      })
    )
  )

/**
 * Run `effect` with an HTTP client that adds `headers` to every request: what a provider's proxy
 * in front of the server asks for (Daytona's preview token), on the `/alive` wait, the start-up
 * requests and every action alike. Values stay `Redacted` until the request is made, and spans
 * that record headers write them as `<redacted>` (telemetry/secretHeaders.ts).
 */
export const withServerHeaders =
  (headers: Readonly<Record<string, Redacted.Redacted<string>>> | undefined) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | HttpClient.HttpClient> =>
    headers === undefined ? effect : Effect.updateService(
      effect,
      HttpClient.HttpClient,
      (client) =>
        client.pipe(
          HttpClient.mapRequest(
            HttpClientRequest.setHeaders(
              Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, Redacted.value(v)]))
            )
          ),
          redactingHeaders(Object.keys(headers))
        )
    )
