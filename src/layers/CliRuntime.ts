/**
 * CliRuntime: the executor in this process, on this machine (no isolation).
 * The fastest runtime and the default for development and tests. Unlike
 * OpenHands' CLIRuntime it keeps one persistent shell (cd and export persist),
 * supports interactive input, and confines file actions to the workspace.
 */
import { type Config, Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { captureDraftEditor } from "../editor/draftEditor.ts"
import { DEFAULT_PYTHON, makeActionExecutor } from "../executor/ActionExecutor.ts"
import type { McpRemoteServer, McpStdioServer } from "../executor/mcp/McpHub.ts"
import type { InvalidOptionsError, RuntimeStartError } from "../schema/errors.ts"
import { type SandboxConfig, sandboxConfigOr } from "../schema/SandboxConfig.ts"
import { Runtime } from "../services/Runtime.ts"
import { makeRuntime } from "./internal/makeRuntime.ts"
import { checkRuntimeOptions } from "./internal/options.ts"
import { makeStatus } from "./internal/statusCell.ts"
import { withUploadPayload } from "./internal/uploadPayload.ts"
import { scopedWorkspace } from "./local/workspace.ts"

export interface CliRuntimeOptions {
  /** Workspace directory (created if missing). Default: a temporary directory removed on release. */
  readonly workspace?: string
  /** Keep a temporary workspace after release. */
  readonly keepWorkspace?: boolean
  /** Refuse file actions on paths outside the workspace (default true). */
  readonly restrictToWorkspace?: boolean
  /** Seconds without output before a command returns partial output (default 10, as OpenHands' server). */
  readonly noChangeTimeoutSeconds?: number
  /** Sandbox settings; default: OpenHands' defaults overridden by `SANDBOX_*` variables. */
  readonly sandbox?: SandboxConfig
  /** Session id (default: a random UUID). */
  readonly sessionId?: string
  /**
   * Most processes (and threads) the session's shells may have at once, so a fork bomb cannot starve
   * the host (default 1024). Enforced where this process can create cgroups (Linux, as root); see docs/runtimes/cli.md.
   */
  readonly pidsLimit?: number
  /** Source `~/.bashrc` in the shell (default false). */
  readonly loadUserRc?: boolean
  /**
   * Run IPython cells in a real kernel (default off); `python` needs ipykernel (default /usr/bin/python3).
   * The agent_skills helpers (`open_file`, `file_editor`, ...) are imported into it unless `agentSkills: false`,
   * as OpenHands' default agents run jupyter with agent_skills.
   */
  readonly ipython?: boolean | { readonly python?: string; readonly agentSkills?: boolean }
  /** MCP servers whose tools `callTool` reaches: stdio ones are started (and stopped) with the runtime. */
  readonly mcp?: { readonly stdio?: ReadonlyArray<McpStdioServer>; readonly remote?: ReadonlyArray<McpRemoteServer> }
  /**
   * Browse with Chromium (default off), launched on the first browser action;
   * `executablePath` defaults to `EFFECT_SANDBOX_CHROMIUM`, then Debian's chromium.
   */
  readonly browser?: boolean | { readonly executablePath?: string }
}

/** The executor's IPython setting for a runtime option. */
const ipythonOption = (option: CliRuntimeOptions["ipython"]) =>
  option === undefined || option === false
    ? undefined
    : {
      python: (option === true ? undefined : option.python) ?? DEFAULT_PYTHON,
      agentSkills: option === true || (option.agentSkills ?? true)
    }

const make = (options: CliRuntimeOptions) =>
  Effect.gen(function*() {
    yield* checkRuntimeOptions("CliRuntime options", options)
    const sessionId = options.sessionId ?? randomUUID()
    const status = yield* makeStatus
    const sandbox = yield* sandboxConfigOr(options.sandbox)
    const workspace = yield* scopedWorkspace(options, sessionId.slice(0, 8), "CliRuntime options")
    const ipython = ipythonOption(options.ipython)
    const executor = yield* makeActionExecutor({
      workspace,
      restrictToWorkspace: options.restrictToWorkspace ?? true,
      noChangeTimeoutSeconds: options.noChangeTimeoutSeconds ?? 10,
      sessionMarker: sessionId,
      ...(options.loadUserRc === undefined ? {} : { loadUserRc: options.loadUserRc }),
      ...(options.pidsLimit === undefined ? {} : { pidsLimit: options.pidsLimit }),
      ...(ipython === undefined ? {} : { ipython }),
      ...(options.mcp === undefined ? {} : { mcp: options.mcp }),
      ...(options.browser === undefined || options.browser === false
        ? {}
        : { browser: options.browser === true ? {} : options.browser })
    })
    // Waited for (its start overlapped the shell's) so the capabilities say whether cells can run, and why not.
    const ipythonUnavailable = yield* executor.ipythonUnavailable
    yield* status.set("RUNTIME_STARTED")

    const copyTo = (hostSource: string, sandboxDest: string, recursive: boolean) =>
      withUploadPayload(hostSource, recursive, (payload) => executor.upload({ ...payload, destination: sandboxDest }))

    const runtime = makeRuntime({
      info: {
        id: sessionId,
        kind: "cli",
        workspace,
        urls: {},
        capabilities: {
          pause: false,
          ipython: ipython !== undefined && ipythonUnavailable === undefined,
          browser: options.browser !== undefined && options.browser !== false,
          mcp: (options.mcp?.stdio?.length ?? 0) + (options.mcp?.remote?.length ?? 0) > 0,
          ...(ipythonUnavailable === undefined ? {} : { unavailable: { ipython: ipythonUnavailable } })
        }
      },
      defaultTimeoutSeconds: sandbox.timeout,
      execute: executor.execute,
      copyTo,
      copyFrom: executor.download,
      listFiles: executor.listFiles,
      listTools: executor.listMcpTools,
      setEnv: executor.setEnv,
      draftEditor: yield* captureDraftEditor
    }, status)
    yield* status.set("READY")
    return runtime
  })

export const CliRuntime = {
  /** A `Runtime` running actions in this process; released with the layer (shell and children killed). */
  layer: (
    options: CliRuntimeOptions = {}
  ): Layer.Layer<Runtime, RuntimeStartError | InvalidOptionsError | Config.ConfigError> =>
    Layer.effect(Runtime, make(options))
} as const
