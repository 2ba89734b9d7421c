/**
 * The action server's command line and environment as every provisioner starts it: the other
 * side of argv.ts, in one place, so a child process (LocalRuntime), a container (DockerRuntime) and
 * a pod cannot drift apart. The tools come from the runtime options' `ipython`, `browser` and
 * `mcp` (services/RuntimeOptions.ts) as OpenHands asks for them: plugins (`--plugins jupyter
 * agent_skills`), the browser flag, and the interpreter and Chromium binary in the environment;
 * stdio MCP servers are posted to `/update_mcp_server` once the server answers
 * (serverStart/serverTools.ts). How the session key reaches the server (a pipe, a file) is the
 * provisioner's: it differs by design (server/sessionKey.ts).
 */
import { CHROMIUM_VARIABLE } from "../executor/browser/chromium.ts"
import { SERVER_TUNING } from "../executor/childEnv.ts"
import { browserSetting, ipythonSetting, startupEnv } from "../runtime/options.ts"
import type { SandboxConfig } from "../schema/SandboxConfig.ts"
import type { RuntimeOptions, RuntimeTools } from "../services/RuntimeOptions.ts"

/** The variable the server reads its IPython interpreter from (server/serve.ts). */
export const PYTHON_VARIABLE = "EFFECT_SANDBOX_PYTHON"

/**
 * The server's tool arguments: `--plugins ...` (none without a plugin: argparse refuses an empty list) and the
 * browser flag.
 */
export const serverToolArgs = (tools: RuntimeTools): Array<string> => {
  const ipython = ipythonSetting(tools.ipython)
  const plugins = [
    ...(ipython === undefined ? [] : ["jupyter", ...(ipython.agentSkills ? ["agent_skills"] : [])]),
    ...(tools.vscode === true ? ["vscode"] : [])
  ]
  return [
    ...(plugins.length === 0 ? [] : ["--plugins", ...plugins]),
    browserSetting(tools.browser) === undefined ? "--no-enable-browser" : "--enable-browser"
  ]
}

/**
 * The plugin names a server command asks for, read back from its argv (ours, or one sent to the
 * runtime API for OpenHands' server): every argument after `--plugins` up to the next option
 * (argparse's `nargs="+"`), and `--plugins=<name>`, wherever they appear.
 */
export const pluginsIn = (command: ReadonlyArray<string>): ReadonlyArray<string> => {
  const names: Array<string> = []
  for (let i = 0; i < command.length; i++) {
    const arg = command[i]!
    if (arg !== "--plugins" && !arg.startsWith("--plugins=")) continue
    if (arg.startsWith("--plugins=")) names.push(arg.slice("--plugins=".length))
    for (i++; i < command.length && !command[i]!.startsWith("-"); i++) names.push(command[i]!)
    i--
  }
  return names
}

/** The server's environment for its tools: the interpreter and Chromium binary, when given. */
export const serverToolEnv = (tools: RuntimeTools): Record<string, string> => {
  const python = ipythonSetting(tools.ipython)?.python
  const chromium = browserSetting(tools.browser)?.executablePath
  return {
    ...(python === undefined ? {} : { [PYTHON_VARIABLE]: python }),
    ...(chromium === undefined ? {} : { [CHROMIUM_VARIABLE]: chromium })
  }
}

/** How to run one server: where, as whom, with what, watched by what. */
export interface ServerCommand {
  /** The Node binary and the server script it runs. */
  readonly node: string
  readonly entry: string
  /** 0: the OS picks one, announced on stdout (announce.ts). */
  readonly port: number
  readonly workingDir: string
  /** 127.0.0.1 unless the server must be reached from outside its network namespace (with a key). */
  readonly host: string
  readonly username: string
  readonly userId: number
  /** The tools' arguments (`serverToolArgs`). */
  readonly tools: RuntimeTools
  /** `--restrict-to-workspace` (restrictsToWorkspace: true unless the options say otherwise). */
  readonly restrictToWorkspace: boolean
  /** `--exit-on-stdin-close`: for a child process, whose parent's death closes its stdin. */
  readonly exitOnStdinClose?: boolean
  /** `--temporary-dir`: directories the server removes when it stops. */
  readonly temporaryDirs?: ReadonlyArray<string>
  /** `--owner-lease`: the lease file the server watches, stopping when it goes stale (server/ownerLease.ts). */
  readonly ownerLease?: string | undefined
}

/** The whole argv, Node binary first (argv.ts parses what follows the script). */
export const serverCommand = (command: ServerCommand): Array<string> => [
  command.node,
  command.entry,
  String(command.port),
  "--working-dir",
  command.workingDir,
  "--host",
  command.host,
  "--username",
  command.username,
  "--user-id",
  String(command.userId),
  ...serverToolArgs(command.tools),
  ...(command.restrictToWorkspace ? ["--restrict-to-workspace"] : []),
  ...(command.exitOnStdinClose === true ? ["--exit-on-stdin-close"] : []),
  ...(command.temporaryDirs ?? []).flatMap((dir) => ["--temporary-dir", dir]),
  ...(command.ownerLease === undefined ? [] : ["--owner-lease", command.ownerLease])
]

/**
 * The server's environment (and so its shells'), beyond the host's or image's: `env` (the sandbox's
 * startup variables and the options' `env`: runtime/options.ts `startupEnv`), the tools', the
 * provisioner's own (`extra`: where the key is, state dir, limits), then the session id and the
 * no-change timeout.
 */
export const serverEnv = (input: {
  readonly env?: Readonly<Record<string, string>> | undefined
  readonly tools: RuntimeTools
  readonly sessionId: string
  readonly noChangeTimeoutSeconds: number
  readonly extra?: Readonly<Record<string, string>>
}): Record<string, string> => ({
  ...input.env,
  ...serverToolEnv(input.tools),
  ...input.extra,
  RUNTIME_ID: input.sessionId,
  NO_CHANGE_TIMEOUT_SECONDS: String(input.noChangeTimeoutSeconds)
})

/**
 * `serverEnv` for a runtime that starts its server in a sandbox from the shared options (a
 * container, a pod): the server's memory tuning (executor/childEnv.ts), the sandbox's startup
 * variables and `env`, the tools, the no-change timeout (default 10 s, as OpenHands' server), and
 * the provisioner's `extra`.
 */
export const sandboxServerEnv = (
  sandbox: SandboxConfig,
  options: RuntimeOptions,
  sessionId: string,
  extra: Readonly<Record<string, string>>
): Record<string, string> =>
  serverEnv({
    // The sandbox's own value of one of these variables, if it sets one, wins: it is then the shells' too.
    env: { ...SERVER_TUNING, ...startupEnv(sandbox, options) },
    tools: options,
    sessionId,
    noChangeTimeoutSeconds: options.noChangeTimeoutSeconds ?? 10,
    extra
  })
