/**
 * The HTTP transport: an action server's base URL and session key become a
 * `RuntimeBackend` (and so, through `makeRuntime`, a `Runtime`). Used by every
 * runtime that runs the executor out of process.
 *
 * - waits for `/alive` with `aliveSchedule` (`alive.ts`);
 * - retries only requests that never reached a handler (429, connection refused);
 * - gives an action its timeout + 5 s on the wire (`RuntimeTimeoutError` after);
 * - turns a dropped connection or dead server into `RuntimeDisconnectedError` and
 *   sets the status to ERROR_RUNTIME_DISCONNECTED (`transport.ts`);
 * - interrupting a request aborts it, and the server stops what it started.
 *
 * The endpoints are modules of their own: actions (`executeAction.ts`), files
 * (`transfers.ts`), background processes (`processes.ts`); this one joins them.
 */
import { Effect, Redacted, Schema } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { RuntimeRequestError } from "../schema/errors.ts"
import { formatIssue } from "../schema/issues.ts"
import { McpToolList } from "../schema/McpTool.ts"
import type { RuntimeBackend } from "../services/RuntimeBackend.ts"
import { redactingHeaders, SESSION_KEY_HEADER } from "../telemetry/secretHeaders.ts"
import type { ActionClientOptions } from "./clientOptions.ts"
import { makeExecute } from "./executeAction.ts"
import { leanClient } from "./leanClient.ts"
import { REQUEST_TIMEOUTS } from "./policies.ts"
import { makeProcessClient } from "./processes.ts"
import { makeTransfers } from "./transfers.ts"
import { makeTransport } from "./transport.ts"

export { waitUntilAlive } from "./alive.ts"
export type { ActionClientOptions, ServerErrorHook, ServerErrorVerdict } from "./clientOptions.ts"
export { layerHttpClient } from "./leanClient.ts"
export { withServerHeaders } from "./serverHeaders.ts"

export const makeActionClient = Effect.fn("ActionClient.make")(function*(options: ActionClientOptions) {
  const base = yield* HttpClient.HttpClient
  const prepare = (request: HttpClientRequest.HttpClientRequest) => {
    const withUrl = HttpClientRequest.prependUrl(request, options.baseUrl)
    return options.sessionApiKey === undefined
      ? withUrl
      : HttpClientRequest.setHeader(withUrl, SESSION_KEY_HEADER, Redacted.value(options.sessionApiKey))
  }
  const client = base.pipe(HttpClient.mapRequest(prepare), redactingHeaders([SESSION_KEY_HEADER]))
  const transport = makeTransport(options, client)
  // `/execute_action` alone goes the lean way (leanClient.ts), with the same policies.
  const actions = makeTransport(options, yield* leanClient(base, client, options.baseUrl, prepare))
  const { disconnected, jsonOf, send } = transport

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
    execute: makeExecute(transport, actions, options.defaultTimeoutSeconds),
    ...makeTransfers(transport),
    listFiles,
    listTools,
    setEnv,
    processes: makeProcessClient(transport)
  } satisfies RuntimeBackend
})
