/**
 * Run the action server from parsed arguments and the OpenHands environment
 * (`SESSION_API_KEY`, `NO_CHANGE_TIMEOUT_SECONDS`, `RUNTIME_ID`, plus our
 * `EFFECT_SANDBOX_STATE_DIR` and `EFFECT_SANDBOX_PIDS_LIMIT`) until interrupted.
 * Shared by `effect-sandbox-server` and `effect-sandbox serve`.
 */
import { Effect, Layer, Redacted } from "effect"
import { HttpServer } from "effect/http"
import { randomUUID } from "node:crypto"
import { mkdirSync, realpathSync } from "node:fs"
import { DEFAULT_PYTHON } from "../executor/ActionExecutor.ts"
import * as ActionServer from "./ActionServer.ts"
import { listeningLine } from "./announce.ts"
import type { ServerArgs } from "./argv.ts"

/** Announce the port on stdout; with `exitOnStdinClose`, stop when our parent goes away. */
const announce = (args: ServerArgs) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    if (server.address._tag !== "UnixPathAddress") process.stdout.write(listeningLine(args.host, server.address.port))
    if (args.exitOnStdinClose) {
      yield* Effect.callback<void>((resume) => {
        process.stdin.on("close", () => resume(Effect.void)).on("end", () => resume(Effect.void)).resume()
      }).pipe(Effect.andThen(Effect.sync(() => process.kill(process.pid, "SIGTERM"))), Effect.forkDetach)
    }
  }))

export const serve = (args: ServerArgs, env: NodeJS.ProcessEnv = process.env) =>
  Effect.suspend(() => {
    const workingDir = args.workingDir ?? process.cwd()
    mkdirSync(workingDir, { recursive: true })
    const noChange = Number(env["NO_CHANGE_TIMEOUT_SECONDS"] ?? "10")
    const pidsLimit = Number(env["EFFECT_SANDBOX_PIDS_LIMIT"])
    const server = ActionServer.layer({
      port: args.port,
      host: args.host,
      workingDir: realpathSync(workingDir),
      // OpenHands tests the key for truth: an empty key means no authentication.
      sessionApiKey: env["SESSION_API_KEY"] ? Redacted.make(env["SESSION_API_KEY"]) : undefined,
      noChangeTimeoutSeconds: Number.isFinite(noChange) && noChange > 0 ? noChange : 10,
      sessionId: env["RUNTIME_ID"] ?? randomUUID(),
      stateDir: env["EFFECT_SANDBOX_STATE_DIR"] || undefined,
      pidsLimit: Number.isInteger(pidsLimit) && pidsLimit > 0 ? pidsLimit : undefined,
      // OpenHands' `--plugins jupyter [agent_skills]`; the interpreter can be chosen with EFFECT_SANDBOX_PYTHON.
      ipython: args.plugins.includes("jupyter")
        ? {
          python: env["EFFECT_SANDBOX_PYTHON"] ?? DEFAULT_PYTHON,
          agentSkills: args.plugins.includes("agent_skills")
        }
        : undefined,
      // On by default, as in OpenHands; Chromium starts only when a browser action comes
      // (EFFECT_SANDBOX_CHROMIUM names the binary).
      browser: args.enableBrowser ? {} : undefined
    })
    return Layer.launch(announce(args).pipe(Layer.provide(server)))
  })
