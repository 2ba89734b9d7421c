/**
 * The environment of every process started for the sandbox: shells, the IPython kernel,
 * MCP stdio servers, Chromium. It is the server's own environment minus the variables that
 * configure the server itself, above all `SESSION_API_KEY`: a command that could read the
 * key could call the server (or, over a bridge network, another sandbox's) as its client.
 * One function, used by every spawn site, so a new tool cannot forget it.
 *
 * It also carries what a login sets for the sandbox's user, the one the server runs as
 * (the runtimes start it as `--username`): OpenHands runs its shell and kernel through
 * `su - <user>`, so code there may read `os.environ['USER']`, which a server started
 * from a service or a container often lacks.
 */
import { type UserInfo, userInfo } from "node:os"

/** Names the fd our launchers pass the session key on (sessionKey.ts); a number, no secret. */
export const SESSION_KEY_FD_VARIABLE = "EFFECT_SANDBOX_SESSION_API_KEY_FD"

/** Names the file DockerRuntime puts the session key in (sessionKey.ts); a path, no secret. */
export const SESSION_KEY_FILE_VARIABLE = "EFFECT_SANDBOX_SESSION_API_KEY_FILE"

/** Holds the SHA-256 (hex) of the session key KubernetesRuntime gives a pod's server; a digest, no key. */
export const SESSION_KEY_SHA256_VARIABLE = "EFFECT_SANDBOX_SESSION_API_KEY_SHA256"

/**
 * The server's configuration, not the sandbox's. The OTLP headers usually carry the telemetry
 * collector's credentials (telemetry/otlp.ts): a command could read them to send as us.
 */
export const SERVER_ONLY_VARIABLES: ReadonlyArray<string> = [
  "SESSION_API_KEY",
  SESSION_KEY_FD_VARIABLE,
  SESSION_KEY_FILE_VARIABLE,
  SESSION_KEY_SHA256_VARIABLE,
  "EFFECT_SANDBOX_STATE_DIR",
  "OTEL_EXPORTER_OTLP_HEADERS",
  "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
  "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
  "OTEL_EXPORTER_OTLP_LOGS_HEADERS"
]

/**
 * How a sandbox's server starts, to keep an idle one small (server/commandLine.ts
 * `sandboxServerEnv`; docs/design-notes.md, memory per sandbox). glibc: parsing and compiling the
 * bundle frees a few MB that the dynamic trim threshold keeps, and each thread's arena holds its
 * own; a fixed threshold and two arenas keep ~6 MB less (musl ignores the variable). V8: the young
 * generation capped at 1 MB a half (the default grows to 16 MB) keeps ~1.2 MB less, and a
 * request's garbage is small enough to be scavenged from it. In the environment, not the argv:
 * launchers (Modal's) read the argv's first two words as the binary and the script. It tunes the
 * server, not the sandbox: children do not inherit a variable that still has this value (one the
 * sandbox's own environment set is the user's, and is kept).
 */
export const SERVER_TUNING: Readonly<Record<string, string>> = {
  GLIBC_TUNABLES: "glibc.malloc.trim_threshold=131072:glibc.malloc.arena_max=2",
  NODE_OPTIONS: "--max-semi-space-size=1"
}

/**
 * `USER` and `LOGNAME` name the user this process runs as; `HOME` and `SHELL` come from its
 * passwd entry where `env` has none (a value set on purpose, such as a runtime's start-up
 * variables, is kept, as OpenHands applies those after the login). Nothing without a
 * passwd entry (an arbitrary container uid).
 */
const loginVariables = (env: Readonly<Record<string, string>>): Record<string, string> => {
  let user: UserInfo<string>
  try {
    user = userInfo()
  } catch {
    return {}
  }
  return {
    USER: user.username,
    LOGNAME: user.username,
    HOME: env["HOME"] || user.homedir,
    // login(1) runs /bin/sh for an empty shell field.
    SHELL: env["SHELL"] || user.shell || "/bin/sh"
  }
}

/** `env` (default: this process's) without the server-only variables, with the login's variables. */
export const sandboxEnv = (env: NodeJS.ProcessEnv = process.env): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || SERVER_ONLY_VARIABLES.includes(name)) continue
    if (SERVER_TUNING[name] === value) continue
    out[name] = value
  }
  return { ...out, ...loginVariables(out) }
}
