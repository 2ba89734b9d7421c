/**
 * CliRuntime: the executor in this process, on this machine (no isolation).
 * The fastest runtime and the default for development and tests. Unlike
 * OpenHands' CLIRuntime it keeps one persistent shell (cd and export persist),
 * supports interactive input, and confines file actions to the workspace.
 */
import { type Config, Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { captureDraftEditor } from "../editor/draftEditor.ts"
import { makeActionExecutor } from "../executor/ActionExecutor.ts"
import type { McpRemoteServer, McpStdioServer } from "../executor/mcp/McpHub.ts"
import { LOCAL_SECRETS_REFUSAL, refuseSecrets } from "../network/edgeSecrets.ts"
import { LOCAL_EGRESS_REFUSAL, refusePolicy } from "../network/policy.ts"
import { scopedWorkspace } from "../runtime/hostWorkspace.ts"
import { makeRuntime } from "../runtime/makeRuntime.ts"
import { checkRuntimeOptions, executorTools, restrictsToWorkspace, startupEnv } from "../runtime/options.ts"
import { makeStatus } from "../runtime/statusCell.ts"
import { withUploadPayload } from "../runtime/uploadPayload.ts"
import { InvalidOptionsError, type RuntimeStartError } from "../schema/errors.ts"
import { sandboxConfigOr } from "../schema/SandboxConfig.ts"
import { Runtime } from "../services/Runtime.ts"
import type { RuntimeOptions } from "../services/RuntimeOptions.ts"

/** The shared options (services/RuntimeOptions.ts) and what only an in-process executor can do. */
export interface CliRuntimeOptions extends RuntimeOptions {
  /** Source `~/.bashrc` in the shell (default false). */
  readonly loadUserRc?: boolean
  /**
   * MCP servers whose tools `callTool` reaches: stdio ones are started (and stopped) with the
   * runtime; remote ones (SSE, streamable HTTP) are called from this process, which only it can.
   */
  readonly mcp?: { readonly stdio?: ReadonlyArray<McpStdioServer>; readonly remote?: ReadonlyArray<McpRemoteServer> }
}

const make = (options: CliRuntimeOptions) =>
  Effect.gen(function*() {
    yield* checkRuntimeOptions("CliRuntime options", options)
    yield* refusePolicy("CliRuntime", options.network, LOCAL_EGRESS_REFUSAL)
    yield* refuseSecrets("CliRuntime", options.secrets, LOCAL_SECRETS_REFUSAL)
    if (options.vscode === true) {
      return yield* new InvalidOptionsError({
        message: "Invalid CliRuntime options: vscode: VS Code runs beside an action server, which CliRuntime does " +
          "not start: use LocalRuntime (code-server on this machine) or DockerRuntime (the tools image)."
      })
    }
    const sessionId = options.sessionId ?? randomUUID()
    const status = yield* makeStatus
    const sandbox = yield* sandboxConfigOr(options.sandbox)
    const workspace = yield* scopedWorkspace(options, sessionId.slice(0, 8), "CliRuntime options")
    const tools = executorTools(options)
    const executor = yield* makeActionExecutor({
      workspace,
      restrictToWorkspace: restrictsToWorkspace(options),
      noChangeTimeoutSeconds: options.noChangeTimeoutSeconds ?? 10,
      sessionMarker: sessionId,
      env: startupEnv(sandbox, options),
      ...(options.loadUserRc === undefined ? {} : { loadUserRc: options.loadUserRc }),
      ...(options.pidsLimit === undefined ? {} : { pidsLimit: options.pidsLimit }),
      ...tools,
      ...(options.mcp === undefined ? {} : { mcp: options.mcp })
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
          snapshot: false,
          ipython: tools.ipython !== undefined && ipythonUnavailable === undefined,
          browser: tools.browser !== undefined,
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
      draftEditor: yield* captureDraftEditor,
      processes: executor.processes
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
