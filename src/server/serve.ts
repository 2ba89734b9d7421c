/**
 * Run the action server from parsed arguments and the OpenHands environment
 * (`SESSION_API_KEY`, `NO_CHANGE_TIMEOUT_SECONDS`, `RUNTIME_ID`, plus our
 * `EFFECT_SANDBOX_STATE_DIR`, `EFFECT_SANDBOX_PIDS_LIMIT` and the key's descriptor or file,
 * sessionKey.ts) until interrupted. Refuses a host beyond loopback without a key (exposure.ts).
 * Shared by `effect-sandbox-server` and `effect-sandbox serve`.
 */
import { Effect, Layer, Redacted } from "effect"
import { HttpServer } from "effect/http"
import { randomUUID } from "node:crypto"
import { mkdirSync, realpathSync } from "node:fs"
import { DEFAULT_PYTHON } from "../executor/ActionExecutor.ts"
import { limitsFromEnv } from "../executor/limits.ts"
import * as ActionServer from "./ActionServer.ts"
import { listeningLine } from "./announce.ts"
import type { ServerArgs } from "./argv.ts"
import { saveServerCompileCache } from "./compileCache.ts"
import { exposureRefusal } from "./exposure.ts"
import { watchOwnerLease } from "./ownerLease.ts"
import { readSessionKeyDigest } from "./sessionKey.ts"
import { removeOnStop } from "./temporaryDirs.ts"
import { CODE_SERVER_VARIABLE, DEFAULT_CODE_SERVER, PORT_PROXY_VARIABLE } from "./vscode/codeServer.ts"

/** Stop as on SIGTERM: the server's finalizers run, then `--temporary-dir`s are removed. */
const stopServer = Effect.sync(() => process.kill(process.pid, "SIGTERM"))

/**
 * Announce the port on stdout, then save what this boot compiled (compileCache.ts); with
 * `exitOnStdinClose`, stop when our parent goes away; with `ownerLease`, when our owner's lease goes stale.
 */
const announce = (args: ServerArgs) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    if (server.address._tag !== "UnixPathAddress") process.stdout.write(listeningLine(args.host, server.address.port))
    saveServerCompileCache()
    if (args.exitOnStdinClose) {
      yield* Effect.callback<void>((resume) => {
        process.stdin.on("close", () => resume(Effect.void)).on("end", () => resume(Effect.void)).resume()
      }).pipe(Effect.andThen(stopServer), Effect.forkDetach)
    }
    if (args.ownerLease !== null) {
      yield* watchOwnerLease(args.ownerLease).pipe(Effect.andThen(stopServer), Effect.forkDetach)
    }
  }))

export const serve = (args: ServerArgs, env: NodeJS.ProcessEnv = process.env) =>
  Effect.gen(function*() {
    const keyDigest = readSessionKeyDigest(env)
    const refusal = exposureRefusal(args.host, keyDigest !== undefined)
    if (refusal !== undefined) {
      // A command-line error: on stderr (stdout announces the port), exit code 2 as for bad usage.
      return yield* Effect.sync(() => {
        process.stderr.write(`${refusal}\n`)
        process.exitCode = 2
      })
    }
    const workingDir = args.workingDir ?? process.cwd()
    mkdirSync(workingDir, { recursive: true })
    const noChange = Number(env["NO_CHANGE_TIMEOUT_SECONDS"] ?? "10")
    const pidsLimit = Number(env["EFFECT_SANDBOX_PIDS_LIMIT"])
    const server = ActionServer.layer({
      port: args.port,
      host: args.host,
      workingDir: realpathSync(workingDir),
      // OpenHands tests the key for truth: an empty key means no authentication.
      sessionApiKeySha256: keyDigest === undefined ? undefined : Redacted.make(keyDigest),
      noChangeTimeoutSeconds: Number.isFinite(noChange) && noChange > 0 ? noChange : 10,
      sessionId: env["RUNTIME_ID"] ?? randomUUID(),
      stateDir: env["EFFECT_SANDBOX_STATE_DIR"] || undefined,
      pidsLimit: Number.isInteger(pidsLimit) && pidsLimit > 0 ? pidsLimit : undefined,
      restrictToWorkspace: args.restrictToWorkspace,
      // OpenHands' `--plugins jupyter [agent_skills]`; the interpreter can be chosen with EFFECT_SANDBOX_PYTHON.
      ipython: args.plugins.includes("jupyter")
        ? {
          python: env["EFFECT_SANDBOX_PYTHON"] ?? DEFAULT_PYTHON,
          agentSkills: args.plugins.includes("agent_skills")
        }
        : undefined,
      // On by default, as in OpenHands; Chromium starts only when a browser action comes
      // (EFFECT_SANDBOX_CHROMIUM names the binary).
      browser: args.enableBrowser ? {} : undefined,
      // Body and transfer bounds: EFFECT_SANDBOX_MAX_* (see limits.ts).
      limits: limitsFromEnv(env),
      // OpenHands' /tmp/oh-server-url unless set (servers sharing a /tmp, as tests do, set their own).
      fileViewerUrlFile: env["EFFECT_SANDBOX_FILE_VIEWER_URL_FILE"] || undefined,
      // `--plugins vscode`: on VSCODE_PORT; EFFECT_SANDBOX_CODE_SERVER names code-server's package directory,
      // EFFECT_SANDBOX_VSCODE_PORT_PROXY=1 turns its port proxy on.
      vscode: args.plugins.includes("vscode")
        ? {
          port: env["VSCODE_PORT"],
          codeServer: env[CODE_SERVER_VARIABLE] || DEFAULT_CODE_SERVER,
          portProxy: env[PORT_PROXY_VARIABLE] === "1"
        }
        : undefined
    })
    return yield* Layer.launch(
      announce(args).pipe(Layer.provide(server), Layer.provide(removeOnStop(args.temporaryDirs)))
    )
  })
