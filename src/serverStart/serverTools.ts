/**
 * What a client learns and tells a started action server about its tools (the argv and environment
 * that start them are server/commandLine.ts): the capabilities the options give, the stdio MCP
 * servers posted to `/update_mcp_server` once it answers (as OpenHands does), what it says cannot
 * work, and its VS Code URL. Used by the provisioned-runtime builder (provisioned.ts), so every
 * provisioner does them the same way (and as CliRuntime, which reads the same options).
 */
import { Effect, Redacted } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import type { McpStdioServer } from "../executor/mcp/McpHub.ts"
import { browserSetting, ipythonSetting } from "../runtime/options.ts"
import { RuntimeStartError } from "../schema/errors.ts"
import { PORT_PROXY_VARIABLE } from "../server/vscode/codeServer.ts"
import { ideBase } from "../server/vscode/ideOrigin.ts"
import type { RuntimeCapabilities } from "../services/Runtime.ts"
import type { RuntimeTools } from "../services/RuntimeOptions.ts"
import { redactingHeaders, SESSION_KEY_HEADER } from "../telemetry/secretHeaders.ts"

/**
 * VS Code's port inside a sandbox with the `vscode` plugin: its `VSCODE_PORT`, the same on every
 * provisioner whose sandbox has ports of its own (each exposes it as it exposes the server's port).
 */
export const VSCODE_PORT = 8001

/**
 * The environment that turns the `vscode` plugin on, when the options ask for it, on `port`: 8001
 * in a sandbox of its own; a port chosen on the host where the server shares the host's ports
 * (LocalRuntime), as 8001 there may be anyone's.
 */
export const vscodeEnv = (tools: RuntimeTools, port: number = VSCODE_PORT): Record<string, string> =>
  tools.vscode !== true
    ? {}
    : { VSCODE_PORT: String(port), ...(tools.vscodePortProxy === true ? { [PORT_PROXY_VARIABLE]: "1" } : {}) }

/** What a runtime started with these tools can do. */
export const toolCapabilities = (
  tools: RuntimeTools,
  runtime: { readonly pause: boolean; readonly snapshot?: boolean }
): RuntimeCapabilities => ({
  pause: runtime.pause,
  snapshot: runtime.snapshot ?? false,
  ipython: ipythonSetting(tools.ipython) !== undefined,
  browser: browserSetting(tools.browser) !== undefined,
  mcp: (tools.mcp?.stdio?.length ?? 0) > 0
})

/** Send `request` to the server with its session key (every endpoint these call is behind it). */
const keyed = (request: HttpClientRequest.HttpClientRequest, key: Redacted.Redacted<string>) =>
  Effect.gen(function*() {
    const client = redactingHeaders([SESSION_KEY_HEADER])(yield* HttpClient.HttpClient)
    return yield* client.execute(HttpClientRequest.setHeader(request, SESSION_KEY_HEADER, Redacted.value(key)))
  })

/** POST the stdio MCP servers; a server that cannot connect fails the start with its error. */
export const sendMcpServers = (
  baseUrl: string,
  key: Redacted.Redacted<string>,
  servers: ReadonlyArray<McpStdioServer> | undefined
): Effect.Effect<void, RuntimeStartError, HttpClient.HttpClient> =>
  servers === undefined || servers.length === 0 ? Effect.void : Effect.gen(function*() {
    const response = yield* keyed(
      HttpClientRequest.bodyJsonUnsafe(HttpClientRequest.post(`${baseUrl}/update_mcp_server`), servers),
      key
    )
    const json = (yield* response.json) as { router_error_log?: string }
    if (json.router_error_log) {
      return yield* new RuntimeStartError({ message: `MCP servers failed to start: ${json.router_error_log}` })
    }
  }).pipe(
    Effect.catchTag(
      "HttpClientError",
      (e) => Effect.fail(new RuntimeStartError({ message: `Cannot configure MCP servers: ${e.message}` }))
    )
  )

type Capability = Exclude<keyof RuntimeCapabilities, "unavailable">

/**
 * The capabilities the options asked for, less those the server says cannot work (`GET
 * /v1/capabilities`: a kernel that did not start), with its reasons, as CliRuntime reports them.
 * Asked only with the `jupyter` plugin, the one tool that can fail at start (it waits for the
 * kernel); a server without the endpoint (OpenHands') is taken at its options' word.
 */
export const serverCapabilities = (
  baseUrl: string,
  key: Redacted.Redacted<string>,
  claimed: RuntimeCapabilities
): Effect.Effect<RuntimeCapabilities, RuntimeStartError, HttpClient.HttpClient> =>
  !claimed.ipython ? Effect.succeed(claimed) : Effect.gen(function*() {
    const response = yield* keyed(HttpClientRequest.get(`${baseUrl}/v1/capabilities`), key)
    if (response.status === 404) return claimed
    const body = (yield* response.json) as { unavailable?: Record<string, unknown> }
    const unavailable = Object.fromEntries(
      Object.entries(body.unavailable ?? {}).filter((entry): entry is [Capability, string] =>
        Object.hasOwn(claimed, entry[0]) && typeof entry[1] === "string"
      )
    )
    if (Object.keys(unavailable).length === 0) return claimed
    const off = Object.fromEntries(Object.keys(unavailable).map((name) => [name, false]))
    return { ...claimed, ...off, unavailable: { ...claimed.unavailable, ...unavailable } }
  }).pipe(
    Effect.catchTag(
      "HttpClientError",
      (e) => Effect.fail(new RuntimeStartError({ message: `Cannot read the server's capabilities: ${e.message}` }))
    )
  )

/**
 * The IDE's connection token from the server's `GET /vscode/connection_token`; undefined when the
 * plugin is off there (token null) or the token cannot be read (logged: the runtime works without
 * its IDE, as OpenHands' does).
 */
const connectionToken = (
  baseUrl: string,
  key: Redacted.Redacted<string>
): Effect.Effect<string | undefined, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const response = yield* keyed(HttpClientRequest.get(`${baseUrl}/vscode/connection_token`), key)
    const { token } = (yield* response.json) as { token?: unknown }
    if (typeof token === "string" && token !== "") return token
    // Asked for, yet off: the server logged why ("VS Code plugin disabled: ...").
    yield* Effect.logWarning(
      "VS Code was asked for (vscode: true) but the server's plugin is off (its connection " +
        "token is null): no info.urls.vscode; the server's log says why"
    )
    return undefined
  }).pipe(
    Effect.catchTag(
      "HttpClientError",
      (e) => Effect.as(Effect.logWarning(`Cannot read the VS Code connection token: ${e.message}`), undefined)
    )
  )

/**
 * OpenHands' `vscode_url`: `<base><path>?tkn=<token>&folder=<workspace>`. The URL carries the
 * token: whoever holds it can use the IDE (see docs/security.md). An IDE at the root of its port
 * (`path` `/`) reached on a shared loopback host is named on its own `ide-<h>.localhost` host
 * instead (ideOrigin.ts), where its token proxy would send the browser anyway.
 */
const vscodeUrl = (vscodeBase: string, path: "/" | "", token: string, workspace: string) =>
  `${path === "/" ? ideBase(vscodeBase, token) : vscodeBase}${path}?${new URLSearchParams({
    tkn: token,
    folder: workspace
  })}`

/**
 * `info.urls` for VS Code at `vscodeBase` (where the provisioner exposes `VSCODE_PORT`): `{ vscode }`
 * when the options asked for it and the plugin runs, else nothing. For `handOver`. `path` is what
 * comes before the query: `/` (the IDE at the root of its host: `vscodeBase` is an origin), or ""
 * for OpenHands' path-mode URL of a remote runtime (`<api>/<runtime_id>/vscode?tkn=...`, which the
 * API sends on to the IDE's own host).
 */
export const vscodeUrls = (
  tools: RuntimeTools,
  server: { readonly baseUrl: string; readonly sessionApiKey: Redacted.Redacted<string>; readonly workspace: string },
  vscodeBase: string | undefined,
  path: "/" | "" = "/"
): Effect.Effect<Record<string, string>, never, HttpClient.HttpClient> =>
  tools.vscode !== true || vscodeBase === undefined
    ? Effect.succeed({})
    : connectionToken(server.baseUrl, server.sessionApiKey).pipe(
      Effect.map((token) => token === undefined ? {} : { vscode: vscodeUrl(vscodeBase, path, token, server.workspace) })
    )

/** The `info.urls` entries that carry the IDE's token: the owner's, and the ingress's on Kubernetes. */
const VSCODE_URL_KEYS = ["vscode", "vscodeIngress"] as const

/**
 * After a resume the server may be a new process (a new pod, a restarted devbox) whose IDE has a
 * new connection token: the VS Code URLs of `urls` (the runtime's own `info.urls` record) are
 * rewritten in place with the token the server gives now (and its own host), so `rt.info.urls.vscode` keeps opening
 * the IDE (a copy taken before the pause does not). Left as they are when the token cannot be read.
 */
export const refreshVsCodeUrl = (
  urls: Record<string, string>,
  baseUrl: string,
  key: Redacted.Redacted<string> | undefined
): Effect.Effect<void, never, HttpClient.HttpClient> => {
  const held = VSCODE_URL_KEYS.filter((name) => urls[name] !== undefined)
  return held.length === 0 || key === undefined ? Effect.void : Effect.gen(function*() {
    const token = yield* connectionToken(baseUrl, key)
    if (token === undefined) return
    for (const name of held) {
      // An IDE at the root of its port has a new `ide-<h>.localhost` host with a new token; a
      // path-mode URL (the API's host) and any other host stay.
      const url = new URL(urls[name]!)
      if (url.pathname === "/") url.hostname = new URL(ideBase(url.origin, token)).hostname
      url.searchParams.set("tkn", token)
      urls[name] = url.href
    }
  })
}
