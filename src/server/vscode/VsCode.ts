/**
 * OpenHands' `vscode` plugin (spec §2.7): a VS Code in the browser for the workspace, reached on
 * `VSCODE_PORT` with a connection token (`GET /vscode/connection_token`). OpenHands runs
 * OpenVSCode Server, which cannot be downloaded here; code-server (npm, 4.x; in the tools image at
 * `/opt/code-server`) is a maintained VS Code server with the same workbench. It listens on a unix
 * socket in a private directory, and the token proxy (tokenProxy.ts) does OpenVSCode's token check
 * on the port. As in OpenHands, the plugin is off (token null, a warning logged) when `VSCODE_PORT`
 * is missing or invalid, the port is taken, or the IDE cannot start; the server runs on without it.
 */
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { existsSync, mkdtempSync } from "node:fs"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { sandboxEnv } from "../../executor/childEnv.ts"
import { removeInFinalizer } from "../../executor/cleanup.ts"
import { killProcessGroup, SESSION_MARKER_VARIABLE } from "../../executor/shell/processTree.ts"
import { codeServerEntry } from "./codeServer.ts"
import { writeVsCodeSettings } from "./settings.ts"
import { makeTokenProxy } from "./tokenProxy.ts"

export interface VsCodeOptions {
  /** `VSCODE_PORT` as given (OpenHands reads the variable; invalid means off). */
  readonly port: string | undefined
  /** The address the action server listens on: the IDE's port is as reachable, no more. */
  readonly host: string
  readonly workspace: string
  /** code-server's package directory (its `out/node/entry.js` runs on this server's Node). */
  readonly codeServer: string
  /** Marks the IDE's processes as the session's (see processTree.ts). */
  readonly marker: string
  /** code-server's port proxy (`/proxy/<port>/`), off unless asked for (codeServer.ts). */
  readonly portProxy?: boolean | undefined
}

/** The connection token, or null when the plugin is off (OpenHands answers `{"token": null}`). */
export class VsCode extends Context.Service<VsCode, { readonly token: string | null }>()("effect-sandbox/VsCode") {}

/** How long code-server may take to answer its health check (it starts in 2-5 s). */
const START_TIMEOUT_MS = 60_000

/** code-server's `GET /healthz` on its socket answers 200. */
const healthy = (socketPath: string) =>
  new Promise<boolean>((resolve) => {
    const probe = request({ socketPath, path: "/healthz", timeout: 2_000 }, (response) => {
      response.resume()
      resolve(response.statusCode === 200)
    })
    probe.on("error", () => resolve(false)).on("timeout", () => probe.destroy())
    probe.end()
  })

/** code-server on a unix socket in `dir`, killed (its whole process group) with the scope. */
const startCodeServer = (options: VsCodeOptions, dir: string) =>
  Effect.gen(function*() {
    const socketPath = join(dir, "code-server.sock")
    let output = ""
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const process_: ChildProcess = spawn(process.execPath, [
          codeServerEntry(options.codeServer),
          "--auth",
          "none",
          "--socket",
          socketPath,
          "--socket-mode",
          "600",
          "--disable-workspace-trust",
          "--disable-telemetry",
          "--disable-update-check",
          ...(options.portProxy === true ? [] : ["--disable-proxy"]),
          // Its config file (which it creates, with a password unused here), state and extensions
          // stay in the private directory, not in the user's home.
          "--config",
          join(dir, "config.yaml"),
          "--user-data-dir",
          join(dir, "user-data"),
          "--extensions-dir",
          join(dir, "extensions"),
          options.workspace
        ], {
          cwd: options.workspace,
          detached: true,
          stdio: ["ignore", "pipe", "pipe"],
          env: { ...sandboxEnv(), [SESSION_MARKER_VARIABLE]: options.marker }
        })
        const keep = (chunk: Buffer) => (output = (output + chunk.toString("utf8")).slice(-4096))
        process_.stdout?.on("data", keep)
        process_.stderr?.on("data", keep)
        process_.on("error", (error) => keep(Buffer.from(error.message)))
        return process_
      }),
      (process_) => Effect.sync(() => process_.pid !== undefined && killProcessGroup(process_.pid))
    )
    const started = Date.now()
    while (!(existsSync(socketPath) && (yield* Effect.promise(() => healthy(socketPath))))) {
      if (child.exitCode !== null || child.signalCode !== null || Date.now() - started > START_TIMEOUT_MS) {
        return yield* Effect.fail(`code-server did not start: ${output.trim() || "no output"}`)
      }
      yield* Effect.sleep("100 millis")
    }
    return socketPath
  })

/** The token proxy listening on `host:port` for the scope. */
const listenProxy = (token: string, socketPath: string, host: string, port: number) =>
  Effect.acquireRelease(
    Effect.callback<ReturnType<typeof makeTokenProxy>, string>((resume) => {
      const server = makeTokenProxy(token, socketPath)
      server.once("error", (error) => resume(Effect.fail(`port ${port} is not available: ${error.message}`)))
      server.listen(port, host, () => resume(Effect.succeed(server)))
    }),
    (server) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
  )

/** The IDE and its proxy, for the scope; the token, or a reason it is off. */
const start = Effect.fn("VsCode.start")(function*(options: VsCodeOptions) {
  const port = Number(options.port)
  if (options.port === undefined || !/^\d{1,5}$/.test(options.port) || port < 1 || port > 65535) {
    return yield* Effect.fail("VSCODE_PORT environment variable not set or invalid")
  }
  yield* writeVsCodeSettings(options.workspace).pipe(Effect.mapError((e) => `cannot write the settings: ${e.cause}`))
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "effect-sandbox-vscode-"))),
    removeInFinalizer
  )
  const token = randomUUID()
  const socketPath = yield* startCodeServer(options, dir)
  yield* listenProxy(token, socketPath, options.host, port)
  return token
})

/** `VsCode` for the layer's lifetime: the IDE when `options` is given and it starts, else a null token. */
export const layer = (options: VsCodeOptions | undefined): Layer.Layer<VsCode> =>
  Layer.effect(
    VsCode,
    options === undefined
      ? Effect.succeed(VsCode.of({ token: null }))
      : Effect.gen(function*() {
        // Its own scope inside the layer's: a start that fails part way releases what it began.
        const scope = yield* Scope.make()
        yield* Effect.addFinalizer((exit) => Scope.close(scope, exit))
        return yield* start(options).pipe(
          Scope.provide(scope),
          Effect.map((token) => VsCode.of({ token })),
          Effect.catch((reason) =>
            Scope.close(scope, Exit.void).pipe(
              Effect.andThen(Effect.logWarning(`VS Code plugin disabled: ${reason}`)),
              Effect.as(VsCode.of({ token: null }))
            )
          )
        )
      })
  )
