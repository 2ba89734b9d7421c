/**
 * Run the action server from parsed arguments and the OpenHands environment
 * (`SESSION_API_KEY`, `NO_CHANGE_TIMEOUT_SECONDS`, `RUNTIME_ID`) until interrupted.
 * Shared by `effect-sandbox-server` and `effect-sandbox serve`.
 */
import { Effect, Layer, Option, Redacted } from "effect"
import { HttpServer } from "effect/http"
import { randomUUID } from "node:crypto"
import { mkdirSync, realpathSync } from "node:fs"
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
    const server = ActionServer.layer({
      port: args.port,
      host: args.host,
      workingDir: realpathSync(workingDir),
      sessionApiKey: Option.getOrUndefined(Option.map(Option.fromNullishOr(env["SESSION_API_KEY"]), Redacted.make)),
      noChangeTimeoutSeconds: Number.isFinite(noChange) && noChange > 0 ? noChange : 10,
      sessionId: env["RUNTIME_ID"] ?? randomUUID()
    })
    return Layer.launch(announce(args).pipe(Layer.provide(server)))
  })
