/**
 * CliRuntime: the executor in this process, on this machine (no isolation).
 * The fastest runtime and the default for development and tests. Unlike
 * OpenHands' CLIRuntime it keeps one persistent shell (cd and export persist),
 * supports interactive input, and confines file actions to the workspace.
 */
import { type Config, Effect, Layer, SubscriptionRef } from "effect"
import { randomUUID } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, join, resolve } from "node:path"
import { makeActionExecutor } from "../executor/ActionExecutor.ts"
import { zipDirectory } from "../executor/zip.ts"
import { type RuntimeStartError, TransferError } from "../schema/errors.ts"
import { type SandboxConfig, sandboxConfigFromEnv } from "../schema/SandboxConfig.ts"
import { Runtime } from "../services/Runtime.ts"
import { makeRuntime, makeStatus } from "./internal/makeRuntime.ts"

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
  /** Source `~/.bashrc` in the shell (default false). */
  readonly loadUserRc?: boolean
}

const scopedWorkspace = (options: CliRuntimeOptions, sessionId: string) =>
  options.workspace !== undefined
    ? Effect.sync(() => {
      mkdirSync(options.workspace!, { recursive: true })
      return realpathSync(options.workspace!)
    })
    : Effect.acquireRelease(
      Effect.sync(() => realpathSync(mkdtempSync(join(tmpdir(), `effect-sandbox-${sessionId.slice(0, 8)}-`)))),
      (dir) => options.keepWorkspace ? Effect.void : Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )

const make = (options: CliRuntimeOptions) =>
  Effect.gen(function*() {
    const sessionId = options.sessionId ?? randomUUID()
    const status = yield* makeStatus
    const sandbox = options.sandbox ?? (yield* sandboxConfigFromEnv)
    const workspace = yield* scopedWorkspace(options, sessionId)
    const executor = yield* makeActionExecutor({
      workspace,
      restrictToWorkspace: options.restrictToWorkspace ?? true,
      noChangeTimeoutSeconds: options.noChangeTimeoutSeconds ?? 10,
      sessionMarker: sessionId,
      ...(options.loadUserRc === undefined ? {} : { loadUserRc: options.loadUserRc })
    })
    yield* SubscriptionRef.set(status, "RUNTIME_STARTED")

    const copyTo = (hostSource: string, sandboxDest: string, recursive: boolean) =>
      Effect.gen(function*() {
        const source = resolve(hostSource)
        if (!existsSync(source)) {
          return yield* new TransferError({ message: `Source file ${hostSource} does not exist` })
        }
        if (!recursive) {
          return yield* executor.upload({ source, filename: basename(source), destination: sandboxDest, recursive })
        }
        // Same wire shape as remote runtimes: a zip whose entries keep the directory's own name.
        const zipFile = join(tmpdir(), `effect-sandbox-upload-${randomUUID()}.zip`)
        yield* Effect.acquireUseRelease(
          Effect.try({
            try: () => writeFileSync(zipFile, zipDirectory(source, basename(source))),
            catch: (cause) => new TransferError({ message: `Cannot zip ${hostSource}: ${String(cause)}` })
          }),
          () =>
            executor.upload({
              source: zipFile,
              filename: `${basename(source)}.zip`,
              destination: sandboxDest,
              recursive
            }),
          () => Effect.sync(() => rmSync(zipFile, { force: true }))
        )
      })

    const runtime = makeRuntime({
      info: {
        id: sessionId,
        kind: "cli",
        workspace,
        urls: {},
        capabilities: { pause: false, ipython: false, browser: false, mcp: false }
      },
      defaultTimeoutSeconds: sandbox.timeout,
      execute: executor.execute,
      copyTo,
      copyFrom: executor.download,
      listFiles: executor.listFiles,
      setEnv: executor.setEnv
    }, status)
    yield* SubscriptionRef.set(status, "READY")
    return runtime
  })

export const CliRuntime = {
  /** A `Runtime` running actions in this process; released with the layer (shell and children killed). */
  layer: (options: CliRuntimeOptions = {}): Layer.Layer<Runtime, RuntimeStartError | Config.ConfigError> =>
    Layer.effect(Runtime, make(options))
} as const
