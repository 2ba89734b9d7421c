#!/usr/bin/env node
/**
 * `effect-sandbox-server <port> [options]`: the action server's entry point, with
 * OpenHands' argv (see argv.ts) and environment (`SESSION_API_KEY`,
 * `NO_CHANGE_TIMEOUT_SECONDS`, `RUNTIME_ID`).
 *
 * Once listening it prints one machine-readable line on stdout (announce.ts). With
 * port 0 the OS picks the port (no probe-then-bind); read it from that line.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Option, Redacted } from "effect"
import { HttpServer } from "effect/http"
import { randomUUID } from "node:crypto"
import { mkdirSync, realpathSync } from "node:fs"
import * as ActionServer from "./ActionServer.ts"
import { listeningLine } from "./announce.ts"
import { parseServerArgs } from "./argv.ts"

const parsed = parseServerArgs(process.argv.slice(2))
if (parsed._tag === "Error") {
  process.stderr.write(`${parsed.message}\n`)
  process.exit(2)
}
const args = parsed.args
const workingDir = args.workingDir ?? process.cwd()
mkdirSync(workingDir, { recursive: true })

const sessionKey = process.env["SESSION_API_KEY"]
const noChange = Number(process.env["NO_CHANGE_TIMEOUT_SECONDS"] ?? "10")

const announce = Layer.effectDiscard(Effect.gen(function*() {
  const server = yield* HttpServer.HttpServer
  if (server.address._tag !== "UnixPathAddress") {
    process.stdout.write(listeningLine(args.host, server.address.port))
  }
  if (args.exitOnStdinClose) {
    // Our parent holds the other end of stdin: when it dies, we stop (and clean up) too.
    yield* Effect.callback<void>((resume) => {
      process.stdin.on("close", () => resume(Effect.void)).on("end", () => resume(Effect.void)).resume()
    }).pipe(Effect.andThen(Effect.sync(() => process.kill(process.pid, "SIGTERM"))), Effect.forkDetach)
  }
}))

ActionServer.layer({
  port: args.port,
  host: args.host,
  workingDir: realpathSync(workingDir),
  sessionApiKey: Option.getOrUndefined(Option.map(Option.fromNullishOr(sessionKey), Redacted.make)),
  noChangeTimeoutSeconds: Number.isFinite(noChange) && noChange > 0 ? noChange : 10,
  sessionId: process.env["RUNTIME_ID"] ?? randomUUID()
}).pipe(
  (server) => announce.pipe(Layer.provide(server)),
  Layer.launch,
  NodeRuntime.runMain
)
