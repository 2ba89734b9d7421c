/**
 * OTLP/HTTP export (src/telemetry/otlp.ts) against a local receiver: the action server and the
 * CLI export a span per action and the action counter when `OTEL_EXPORTER_OTLP_ENDPOINT` is set,
 * nothing otherwise, and no secret reaches a payload.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Layer, Redacted, Scope, Tracer } from "effect"
import { spawnSync } from "node:child_process"
import { mkdtempSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { CliRuntime, InvalidOptionsError, otlpLayerFromEnv, Runtime } from "../../src/index.ts"
import { postJson, run, startTestServer } from "../server/helpers.ts"
import { otlpReceiver, type OtlpReceiver } from "./otlpReceiver.ts"

/** Short export intervals, so a running server sends within the test. */
const FAST = { OTEL_BSP_SCHEDULE_DELAY: "100", OTEL_METRIC_EXPORT_INTERVAL: "200" }

const withEnv = (env: Record<string, string>) => Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env)))

/** Poll until `check` passes (or fail with its last error after `ms`). */
const eventually = <A>(check: () => A, ms = 10_000) =>
  Effect.promise(async () => {
    const deadline = Date.now() + ms
    for (;;) {
      try {
        return check()
      } catch (error) {
        if (Date.now() > deadline) throw error
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
  })

const SECRET = "s3cr3t-value-7741"

/** Assert that no payload holds any of `secrets`. */
const assertNoSecret = (receiver: OtlpReceiver, secrets: ReadonlyArray<string>) => {
  const everything = receiver.everything()
  assert.isAbove(everything.length, 0)
  for (const secret of secrets) assert.notInclude(everything, secret)
}

describe("OTLP export", () => {
  it.live("the action server exports a span per action and the action counter; no secret in any payload", () =>
    Effect.gen(function*() {
      const receiver = yield* otlpReceiver
      const scope = yield* Scope.make()
      const server = yield* startTestServer({
        env: {
          ...FAST,
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
          OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
          OTEL_EXPORTER_OTLP_HEADERS: "x-collector-token=tok-do-not-leak-9931"
        }
      }).pipe(Scope.provide(scope))
      const env = yield* postJson(server, "/v1/env", { vars: { API_TOKEN: SECRET }, secrets: ["API_TOKEN"] })
      assert.strictEqual(env.status, 200, env.text)
      assert.strictEqual((yield* run(server, "echo $API_TOKEN")).content.trim(), "<redacted>")
      // The collector's credentials are the server's configuration, not the sandbox's.
      assert.strictEqual((yield* run(server, "echo \"[$OTEL_EXPORTER_OTLP_HEADERS]\"")).content.trim(), "[]")
      assert.strictEqual((yield* run(server, "exit 3")).extras.metadata.exit_code, 3)

      const spans = yield* eventually(() => {
        const spans = receiver.spans().filter((s) => s.name === "CmdRunAction")
        assert.lengthOf(spans, 3)
        return spans
      })
      assert.deepStrictEqual(spans[0]!.attributes, { "runtime.kind": "server", "action.type": "run", exit_code: 0 })
      assert.strictEqual(spans[2]!.attributes["exit_code"], 3)
      assert.strictEqual(spans[0]!.serviceName, "effect-sandbox-server")
      const point = yield* eventually(() => {
        const points = receiver.sums().filter((p) =>
          p.metric === "effect_sandbox_actions_total" && p.attributes["runtime.kind"] === "server"
        )
        assert.strictEqual(points.at(-1)?.value, 3)
        return points.at(-1)!
      })
      assert.deepStrictEqual(point.attributes, { "runtime.kind": "server", "action.type": "run" })
      assert.isTrue(point.monotonic, "a counter that only goes up")
      assert.isTrue(receiver.requests.every((r) => r.headers["x-collector-token"] === "tok-do-not-leak-9931"))

      yield* Scope.close(scope, Exit.void)
      assertNoSecret(receiver, [SECRET, server.key, "tok-do-not-leak-9931"])
    }), 60_000)
})
