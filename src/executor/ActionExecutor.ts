/**
 * The ActionExecutor implementation: one persistent bash session, the OHEditor,
 * file read/write, transfers and run-time environment, behind a lock so actions
 * of one session run one at a time (as OpenHands' server does). Tools that are
 * not set up here answer with OpenHands' error texts.
 */
import { Effect, Layer, Scope, Semaphore } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Action, CmdRunAction, FileEditAction, FileReadAction, FileWriteAction } from "../schema/Action.ts"
import { copyWith } from "../schema/copy.ts"
import { invalidEnvMessage, InvalidEnvVarError, type RuntimeStartError } from "../schema/errors.ts"
import {
  ErrorObservation,
  FileEditObservation,
  FileReadObservation,
  FileWriteObservation,
  type Observation
} from "../schema/Observation.ts"
import { shortSecretsError } from "../schema/secrets.ts"
import { ActionExecutor, type ActionExecutorShape } from "../services/ActionExecutor.ts"
import { makeBrowser } from "./browser/Browser.ts"
import { sandboxEnv } from "./childEnv.ts"
import { removeInFinalizer } from "./cleanup.ts"
import { makeEditor, unifiedDiff } from "./editor/OHEditor.ts"
import { EnvStore } from "./env.ts"
import { envFileDir } from "./envDir.ts"
import { readFile, writeFile } from "./files/fileOps.ts"
import { viewFile } from "./files/viewFile.ts"
import { makeIPython } from "./jupyter/IPython.ts"
import { makeMcpHub, type McpRemoteServer, type McpStdioServer } from "./mcp/McpHub.ts"
import { makeProcessManager } from "./processes/ProcessManager.ts"
import { type BashSession, makeBashSession, type OutputListener } from "./shell/BashSession.ts"
import { DEFAULT_PIDS_LIMIT } from "./shell/cgroup.ts"
import { agentSkillsKernel } from "./skills/agentSkills.ts"
import * as Transfer from "./transfer.ts"
import { Workspace } from "./workspace.ts"

export interface ExecutorOptions {
  /** Absolute path of the workspace directory (the shell starts there). */
  readonly workspace: string
  /** The path agents use for the workspace (OpenHands: `/workspace`); defaults to `workspace`. */
  readonly mountPath?: string
  /** Refuse file paths that resolve outside the workspace. */
  readonly restrictToWorkspace: boolean
  /** Seconds without output before a command returns partial output (OpenHands' NO_CHANGE_TIMEOUT_SECONDS). */
  readonly noChangeTimeoutSeconds: number
  /** Marks every process the shells start, so they can be reaped. */
  readonly sessionMarker: string
  readonly loadUserRc?: boolean
  /**
   * Variables every process of the session starts with, over this process's (a server gets them
   * in its own environment instead): CliRuntime's `env` and `sandbox.runtimeStartupEnvVars`.
   */
  readonly env?: Readonly<Record<string, string>>
  /** Most processes the session's shells may have at once, where a pids cgroup is available (default 1024). */
  readonly pidsLimit?: number
  /**
   * Private directory for scripts, the env file and saved outputs. Default: a
   * temporary one removed with the executor. Given, it belongs to the caller, who
   * removes it even if this process is killed (LocalRuntime does).
   */
  readonly stateDir?: string
  /**
   * Run IPython cells in a real kernel with this Python (which needs ipykernel); absent: no IPython.
   * `agentSkills`: import the agent_skills helpers into the kernel (OpenHands' `agent_skills` plugin).
   */
  readonly ipython?: { readonly python: string; readonly agentSkills?: boolean }
  /** MCP servers whose tools `McpCallAction` calls (stdio servers can be replaced later). */
  readonly mcp?: { readonly stdio?: ReadonlyArray<McpStdioServer>; readonly remote?: ReadonlyArray<McpRemoteServer> }
  /** Browse with Chromium (launched on the first browser action); absent: no browser. */
  readonly browser?: { readonly executablePath?: string }
  /**
   * Made once bash is spawned, not at its first prompt (default false): the action server builds
   * its HTTP side while bash starts, and awaits `started` before it lets requests in.
   */
  readonly shellStartsLater?: boolean
}

/** Debian's Python, which has ipykernel once `python3-ipykernel` is installed. */
export const DEFAULT_PYTHON = "/usr/bin/python3"

/** OpenHands' texts for tools this executor does not run (IPython, browser, MCP come with their plugins). */
export const MISSING_TOOL_TEXT = {
  ipython: "JupyterRequirement not found. Unable to run IPython action.",
  browser: "Browser functionality is not supported or disabled.",
  llmEdit:
    "The LLM-based draft editor (impl_source 'llm_based_edit') runs on the agent side; send editor commands with impl_source 'oh_aci'."
} as const

/** A private directory for shell scripts and saved outputs, removed with the scope. */
export const scopedStateDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "effect-sandbox-state-"))),
  removeInFinalizer
)

export const makeActionExecutor = (
  options: ExecutorOptions
): Effect.Effect<ActionExecutorShape, RuntimeStartError, Scope.Scope> =>
  Effect.gen(function*() {
    const stateDir = options.stateDir ?? (yield* scopedStateDir)
    const ws = new Workspace({
      root: options.workspace,
      mountPath: options.mountPath ?? options.workspace,
      restricted: options.restrictToWorkspace,
      extraAllowed: [stateDir]
    })
    const env = new EnvStore(join(yield* envFileDir(stateDir, options.stateDir === undefined), "env.sh"))
    const baseEnv = { ...sandboxEnv(), ...options.env }
    const sessionOptions = (cwd: string, dir: string) => ({
      cwd,
      stateDir: dir,
      env,
      baseEnv,
      noChangeTimeoutSeconds: options.noChangeTimeoutSeconds,
      marker: options.sessionMarker,
      ...(options.loadUserRc === undefined ? {} : { loadUserRc: options.loadUserRc }),
      ...(options.pidsLimit === undefined ? {} : { pidsLimit: options.pidsLimit })
    })
    const shell: BashSession = yield* makeBashSession({
      ...sessionOptions(options.workspace, stateDir),
      awaitPrompt: options.shellStartsLater !== true
    })
    const editor = makeEditor(ws)
    const skills = options.ipython?.agentSkills === true ? yield* agentSkillsKernel(stateDir, baseEnv) : null
    const startIPython = options.ipython === undefined ? Effect.succeed(null) : makeIPython({
      python: options.ipython.python,
      stateDir,
      cwd: () => shell.cwd(),
      env,
      baseEnv: { ...baseEnv, ...skills?.env },
      marker: `${options.sessionMarker}/kernel`,
      ...(skills === null ? {} : { initCode: skills.initCode })
    })
    const startMcp = Effect.acquireRelease(
      makeMcpHub(options.mcp?.remote ?? [], options.mcp?.stdio ?? [], baseEnv),
      (hub) => hub.close
    )
    // The tools start side by side, as OpenHands initialises its plugins concurrently; each
    // bounds its own start (kernel 30 s, MCP's initialize request 60 s), within OpenHands' 120 s.
    const [ipython, mcp] = yield* Effect.all([startIPython, startMcp], { concurrency: "unbounded" })
    const browser = options.browser === undefined ? null : yield* makeBrowser({
      ...options.browser,
      workspace: ws,
      cwd: () => shell.cwd(),
      marker: `${options.sessionMarker}/browser`,
      env: baseEnv
    })
    const processes = yield* makeProcessManager({
      workspace: ws,
      cwd: () => shell.cwd(),
      baseEnv,
      env,
      marker: options.sessionMarker,
      pidsLimit: options.pidsLimit ?? DEFAULT_PIDS_LIMIT
    })
    const lock = yield* Semaphore.make(1)
    let staticCount = 0

    /** `is_static`: a fresh shell for this one command (in `cwd`), closed afterwards. */
    const runStatic = (action: CmdRunAction, onOutput: OutputListener | undefined) =>
      Effect.gen(function*() {
        const resolved = yield* Effect.result(ws.resolve(action.cwd ?? options.workspace, shell.cwd()))
        if (resolved._tag === "Failure") return new ErrorObservation({ content: resolved.failure.message })
        const dir = join(stateDir, `static-${++staticCount}`)
        const session = yield* makeBashSession(sessionOptions(resolved.success, dir))
        return yield* session.execute(copyWith(action, { isStatic: false }), onOutput)
      }).pipe(Effect.scoped)

    const read = (action: FileReadAction): Effect.Effect<Observation> =>
      Effect.gen(function*() {
        if (action.implSource === "oh_aci") {
          const result = yield* editor.run({
            command: "view",
            path: action.path,
            fileText: null,
            oldStr: null,
            newStr: null,
            insertLine: null,
            viewRange: action.viewRange
          }, shell.cwd())
          return new FileReadObservation({ content: result.output, path: action.path, implSource: "oh_aci" })
        }
        const result = yield* readFile(ws, shell.cwd(), action)
        return result._tag === "Ok"
          ? new FileReadObservation({ content: result.content, path: result.path })
          : new ErrorObservation({ content: result.message })
      })

    const write = (action: FileWriteAction) =>
      Effect.map(writeFile(ws, shell.cwd(), action), (r) =>
        r._tag === "Ok"
          ? new FileWriteObservation({ path: r.path })
          : new ErrorObservation({ content: r.message }))

    const edit = (action: FileEditAction): Effect.Effect<Observation> =>
      Effect.gen(function*() {
        if (action.implSource === "llm_based_edit") return new ErrorObservation({ content: MISSING_TOOL_TEXT.llmEdit })
        const result = yield* editor.run({
          command: action.command,
          path: action.path,
          fileText: action.fileText,
          oldStr: action.oldStr,
          newStr: action.newStr,
          insertLine: action.insertLine,
          viewRange: null
        }, shell.cwd())
        return new FileEditObservation({
          content: result.output,
          path: action.path,
          oldContent: action.oldStr,
          newContent: action.newStr,
          implSource: "oh_aci",
          diff: result.isError ? "" : unifiedDiff(result.oldFile ?? "", result.newFile ?? "", action.path)
        })
      })

    const dispatch = (action: Action, onOutput?: OutputListener): Effect.Effect<Observation, RuntimeStartError> => {
      switch (action._tag) {
        case "CmdRunAction":
          return action.isStatic ? runStatic(action, onOutput) : shell.execute(action, onOutput)
        case "FileReadAction":
          return read(action)
        case "FileWriteAction":
          return write(action)
        case "FileEditAction":
          return edit(action)
        case "IPythonRunCellAction":
          return ipython === null
            ? Effect.succeed(new ErrorObservation({ content: MISSING_TOOL_TEXT.ipython }))
            : ipython.run(action, onOutput)
        case "BrowseURLAction":
          return browser === null
            ? Effect.succeed(new ErrorObservation({ content: MISSING_TOOL_TEXT.browser }))
            : browser.browse(action)
        case "BrowseInteractiveAction":
          return browser === null
            ? Effect.succeed(new ErrorObservation({ content: MISSING_TOOL_TEXT.browser }))
            : browser.browseInteractive(action)
        case "McpCallAction":
          return mcp.call(action)
      }
    }

    return {
      workspace: ws.mountPath,
      // Every string of the observation is masked here; command output was masked before it was cut.
      execute: (action, onOutput) => {
        const listener = onOutput && env.mask.stream(onOutput)
        return lock.withPermits(1)(dispatch(action, listener)).pipe(
          // The command's output is over: what was held back as a possible secret's start goes too.
          Effect.tap(() => Effect.sync(() => listener?.flush())),
          Effect.map((observation) => env.mask.deep(observation)),
          Effect.mapError((error) => env.mask.deep(error))
        )
      },
      upload: (request) => Transfer.upload(ws, shell.cwd(), request),
      download: (path, outFile) => Transfer.download(ws, shell.cwd(), path, outFile),
      listFiles: (path) => Transfer.listFiles(ws, options.workspace, path),
      viewFile: (path) => viewFile(ws, shell.cwd(), path),
      setMcpServers: mcp.setStdioServers,
      listMcpTools: mcp.listTools,
      ipythonUnavailable: ipython === null ? Effect.succeed(undefined) : ipython.unavailable,
      started: shell.started,
      processes,
      setEnv: (vars, secrets) =>
        Effect.suspend(() => {
          // Checked here too: the action server's `POST /v1/env` reaches the executor without `makeRuntime`.
          const short = shortSecretsError(vars, secrets ?? [])
          if (short !== undefined) return Effect.fail(short)
          const invalid = env.set(vars, secrets)
          return invalid.length === 0
            ? Effect.void
            : Effect.fail(
              new InvalidEnvVarError({
                names: invalid,
                message: invalidEnvMessage(invalid)
              })
            )
        })
    } satisfies ActionExecutorShape
  })

/** The executor as a layer, e.g. for the action server or an in-process runtime. */
export const layer = (options: ExecutorOptions): Layer.Layer<ActionExecutor, RuntimeStartError> =>
  Layer.effect(ActionExecutor, makeActionExecutor(options))
