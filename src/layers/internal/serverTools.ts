/**
 * The tools an action server runs beside its shell, as every runtime that starts
 * one asks for them: OpenHands plugins (`--plugins jupyter ...`), the browser
 * flag (`--enable-browser`), and stdio MCP servers posted to `/update_mcp_server` once the server
 * answers (as OpenHands does). One place for the argv, the capabilities they
 * give, the MCP hand-over, and what the server says cannot work, so Local and Docker cannot
 * drift apart.
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
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(
      HttpClientRequest.get(`${baseUrl}/v1/capabilities`).pipe(
        HttpClientRequest.setHeader("X-Session-API-Key", Redacted.value(key))
      )
    )
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
