/**
 * The action server's program (imported by main.ts, the entry point), with
 * OpenHands' argv (argv.ts) and environment (serve.ts). Once listening it prints
 * one machine-readable line on stdout (announce.ts); with port 0 the OS picks the
 * port, never probe-then-bind.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect } from "effect"
import { otlpLayerFromEnv } from "../telemetry/otlp.ts"
import { parseServerArgs } from "./argv.ts"
import { serve } from "./serve.ts"

const parsed = parseServerArgs(process.argv.slice(2))
if (parsed._tag === "Error") {
  process.stderr.write(`${parsed.message}\n`)
  process.exit(2)
}
serve(parsed.args).pipe(Effect.provide(otlpLayerFromEnv({ serviceName: "effect-sandbox-server" })), NodeRuntime.runMain)
