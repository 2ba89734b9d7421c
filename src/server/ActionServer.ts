/**
 * The action server: the executor behind HTTP, wire-compatible with OpenHands'
 * action execution server. Every runtime but the in-process one runs this.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect, Layer, Redacted } from "effect"
import { HttpRouter } from "effect/http"
import * as Executor from "../executor/ActionExecutor.ts"
import { DEFAULT_LIMITS, Limits, type TransferLimits } from "../executor/limits.ts"
import { ActionExecutor } from "../services/ActionExecutor.ts"
import { serverRedactsSessionKey } from "../telemetry/secretHeaders.ts"
import { keyCheck, requestGate } from "./auth.ts"
import { closingServer } from "./closingServer.ts"
import * as FileViewer from "./fileViewer/FileViewer.ts"
import { makeFrontDoor, openDoor, withFrontDoor } from "./frontDoor.ts"
import { leanExecute } from "./leanExecute.ts"
import { actionRoutes } from "./routes/actions.ts"
import { fileRoutes } from "./routes/files.ts"
import { infoRoutes } from "./routes/info.ts"
import { mcpProxyRoutes } from "./routes/mcpProxy.ts"
import { processRoutes } from "./routes/processes.ts"
import type { ServerClock } from "./serverInfo.ts"
import { keyDigest } from "./sessionKey.ts"
import * as VsCode from "./vscode/VsCode.ts"

export interface ActionServerOptions {
  readonly port: number
  readonly host: string
  /** The workspace: the shell starts here; relative file paths resolve here. */
  readonly workingDir: string
  /** Required on every request but /alive and /server_info (`X-Session-API-Key`). */
  readonly sessionApiKey?: Redacted.Redacted<string> | undefined
  /** Or only the key's SHA-256, when the server must not hold the key itself (server/sessionKey.ts). */
  readonly sessionApiKeySha256?: Redacted.Redacted<Buffer> | undefined
  readonly noChangeTimeoutSeconds: number
  /** Marks the processes this server's shells start (see processTree.ts). */
  readonly sessionId: string
  /** The executor's private directory, when the server's owner provides (and removes) it. */
  readonly stateDir?: string | undefined
  /** Most processes the shells may have at once, where a pids cgroup is available (default 1024). */
  readonly pidsLimit?: number | undefined
  /**
   * Refuse file actions outside `workingDir` (`--restrict-to-workspace`; default false: the sandbox
   * (container, pod, VM) is the boundary, as in OpenHands' server).
   */
  readonly restrictToWorkspace?: boolean | undefined
  /** The `jupyter` plugin: IPython cells in a kernel run by this Python (with `agent_skills`: its helpers). */
  readonly ipython?: Executor.ExecutorOptions["ipython"] | undefined
  /** OpenHands' `--enable-browser`: Chromium launched on the first browser action. */
  readonly browser?: Executor.ExecutorOptions["browser"] | undefined
  /** Bounds on bodies and transfers (default `DEFAULT_LIMITS`; the CLI reads them from the environment). */
  readonly limits?: TransferLimits | undefined
  /** Where the file viewer's URL is written (default OpenHands' `/tmp/oh-server-url`). */
  readonly fileViewerUrlFile?: string | undefined
  /** OpenHands' `vscode` plugin: code-server behind a connection token on `VSCODE_PORT`. */
  readonly vscode?: Omit<VsCode.VsCodeOptions, "host" | "workspace" | "marker"> | undefined
}

/** Serve the executor on `host:port` until the layer is released (which stops the shells too). */
export const layer = (options: ActionServerOptions) => {
  const clock: ServerClock = { startedAt: Date.now(), lastActionAt: Date.now() }
  const keySha256 = options.sessionApiKeySha256 ??
    (options.sessionApiKey === undefined ? undefined : Redacted.make(keyDigest(Redacted.value(options.sessionApiKey))))
  const door = makeFrontDoor()
  const routes = Layer.mergeAll(
    actionRoutes(clock),
    fileRoutes,
    infoRoutes(clock, options.workingDir, keyCheck(keySha256)),
    mcpProxyRoutes,
    processRoutes,
    requestGate(keySha256)
  )
  // Requests wait at the door until the shell has printed its first prompt and the routes are
  // served (frontDoor.ts). bash starts while the listener, the routes and the file viewer are
  // built, where it used to start before them: ~15 ms of a start on an idle machine.
  const opened = Layer.effectDiscard(Effect.gen(function*() {
    yield* (yield* ActionExecutor).started
    openDoor(door)
  }))
  return opened.pipe(
    Layer.provideMerge(Layer.mergeAll(
      HttpRouter.serve(routes, { disableListenLog: true, disableLogger: true }).pipe(
        Layer.provide(serverRedactsSessionKey)
      ),
      FileViewer.layer(options.fileViewerUrlFile ?? FileViewer.URL_FILE),
      leanExecute(door, keySha256, clock)
    )),
    // Stopping interrupts requests in flight at once (a running command is killed, an MCP proxy
    // stream ends) instead of waiting up to 20 s for them: whoever stops a sandbox wants it stopped.
    Layer.provideMerge(
      NodeHttpServer.layer(() => withFrontDoor(closingServer(), door), {
        port: options.port,
        host: options.host,
        disablePreemptiveShutdown: true
      })
    ),
    Layer.provide(
      Executor.layer({
        workspace: options.workingDir,
        restrictToWorkspace: options.restrictToWorkspace ?? false,
        noChangeTimeoutSeconds: options.noChangeTimeoutSeconds,
        sessionMarker: options.sessionId,
        shellStartsLater: true,
        ...(options.stateDir === undefined ? {} : { stateDir: options.stateDir }),
        ...(options.pidsLimit === undefined ? {} : { pidsLimit: options.pidsLimit }),
        ...(options.ipython === undefined ? {} : { ipython: options.ipython }),
        ...(options.browser === undefined ? {} : { browser: options.browser })
      })
    ),
    Layer.provide(
      VsCode.layer(
        options.vscode === undefined ? undefined : {
          ...options.vscode,
          host: options.host,
          workspace: options.workingDir,
          marker: `${options.sessionId}/vscode`
        }
      )
    ),
    Layer.provide(NodeServices.layer),
    Layer.provide(Layer.succeed(Limits, options.limits ?? DEFAULT_LIMITS))
  )
}
