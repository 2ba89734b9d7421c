/**
 * The environment of every process started for the sandbox: shells, the IPython kernel,
 * MCP stdio servers, Chromium. It is the server's own environment minus the variables that
 * configure the server itself, above all `SESSION_API_KEY`: a command that could read the
 * key could call the server (or, over a bridge network, another sandbox's) as its client.
 * One function, used by every spawn site, so a new tool cannot forget it.
 */

/** Names the fd our launchers pass the session key on (sessionKey.ts); a number, no secret. */
export const SESSION_KEY_FD_VARIABLE = "EFFECT_SANDBOX_SESSION_API_KEY_FD"

/** Names the file DockerRuntime puts the session key in (sessionKey.ts); a path, no secret. */
export const SESSION_KEY_FILE_VARIABLE = "EFFECT_SANDBOX_SESSION_API_KEY_FILE"

/**
 * The server's configuration, not the sandbox's. The OTLP headers usually carry the telemetry
 * collector's credentials (telemetry/otlp.ts): a command could read them to send as us.
 */
export const SERVER_ONLY_VARIABLES: ReadonlyArray<string> = [
  "SESSION_API_KEY",
  SESSION_KEY_FD_VARIABLE,
  SESSION_KEY_FILE_VARIABLE,
  "EFFECT_SANDBOX_STATE_DIR",
  "OTEL_EXPORTER_OTLP_HEADERS",
  "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
  "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
  "OTEL_EXPORTER_OTLP_LOGS_HEADERS"
]

/** `env` (default: this process's) without the server-only variables. */
export const sandboxEnv = (env: NodeJS.ProcessEnv = process.env): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && !SERVER_ONLY_VARIABLES.includes(name)) out[name] = value
  }
  return out
}
