/**
 * The tools an action server runs beside its shell, as every runtime that starts
 * one asks for them: OpenHands plugins (`--plugins jupyter ...`), the browser
 * flag (`--enable-browser`), and stdio MCP servers posted to `/update_mcp_server` once the server
 * answers (as OpenHands does). One place for the argv, the capabilities they
 * give, and the MCP hand-over, so Local and Docker cannot drift apart.
 */
import { Effect, Redacted } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import type { McpStdioServer } from "../../executor/mcp/McpHub.ts"
import { RuntimeStartError } from "../../schema/errors.ts"
import type { PluginName } from "../../server/argv.ts"
import type { RuntimeCapabilities } from "../../services/Runtime.ts"

export interface ServerToolOptions {
  /** OpenHands plugins for the server: `jupyter` runs IPython cells in a real kernel. */
  readonly plugins?: ReadonlyArray<PluginName>
  /** stdio MCP servers, sent to the server's /update_mcp_server once it is alive (as OpenHands does). */
  readonly mcpServers?: ReadonlyArray<McpStdioServer>
  /**
   * Browse with Chromium (`--enable-browser`; OpenHands' default is on, ours off, as
   * not every image or machine has Chromium). The server launches it on the first
   * browser action.
   */
  readonly browser?: boolean
}

/** The server's `--plugins ...` arguments (none without plugins: argparse refuses an empty list). */
export const pluginArgs = (plugins: ReadonlyArray<PluginName> | undefined): Array<string> =>
  plugins !== undefined && plugins.length > 0 ? ["--plugins", ...plugins] : []

/** The server's browser flag. */
export const browserArg = (browser: boolean | undefined): string =>
  browser === true ? "--enable-browser" : "--no-enable-browser"

/** What a server started with these tools can do. */
export const toolCapabilities = (
  options: ServerToolOptions,
  runtime: { readonly pause: boolean }
): RuntimeCapabilities => ({
  pause: runtime.pause,
  ipython: options.plugins?.includes("jupyter") ?? false,
  browser: options.browser === true,
  mcp: (options.mcpServers?.length ?? 0) > 0
})

/** POST the stdio MCP servers; a server that cannot connect fails the start with its error. */
export const sendMcpServers = (
  baseUrl: string,
  key: Redacted.Redacted<string>,
  servers: ReadonlyArray<McpStdioServer> | undefined
): Effect.Effect<void, RuntimeStartError, HttpClient.HttpClient> =>
  servers === undefined || servers.length === 0 ? Effect.void : Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(
      HttpClientRequest.post(`${baseUrl}/update_mcp_server`).pipe(
        HttpClientRequest.setHeader("X-Session-API-Key", Redacted.value(key)),
        HttpClientRequest.bodyJsonUnsafe(servers)
      )
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

/**
 * OpenHands' `vscode_url`: `<base>/?tkn=<token>&folder=<workspace>`, with the token from the
 * server's `GET /vscode/connection_token`; undefined when the plugin is off there (token null) or
 * the token cannot be read (logged: the runtime works without its IDE, as OpenHands' does).
 * The URL carries the token: whoever holds it can use the IDE (see docs/security.md).
 */
export const vscodeUrl = (
  baseUrl: string,
  key: Redacted.Redacted<string>,
  vscodeBase: string,
  workspace: string
): Effect.Effect<string | undefined, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(
      HttpClientRequest.get(`${baseUrl}/vscode/connection_token`).pipe(
        HttpClientRequest.setHeader("X-Session-API-Key", Redacted.value(key))
      )
    )
    const { token } = (yield* response.json) as { token?: unknown }
    return typeof token === "string" && token !== ""
      ? `${vscodeBase}/?${new URLSearchParams({ tkn: token, folder: workspace })}`
      : undefined
  }).pipe(
    Effect.catchTag(
      "HttpClientError",
      (e) => Effect.as(Effect.logWarning(`Cannot read the VS Code connection token: ${e.message}`), undefined)
    )
  )
