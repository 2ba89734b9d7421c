/**
 * OTLP/HTTP export (src/telemetry/otlp.ts) against a local receiver: the action server and the
 * CLI export a span per action and the action counter when `OTEL_EXPORTER_OTLP_ENDPOINT` is set,
 * nothing otherwise, and no secret reaches a payload.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Layer, Redacted, Scope } from "effect"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { CliRuntime, InvalidOptionsError, otlpLayerFromEnv, Runtime } from "../../src/index.ts"
import { LocalRuntime } from "../../src/local.ts"
import { eventually } from "../eventually.ts"
import { postJson, run, startTestServer, tempDir } from "../server/helpers.ts"
import { type OtlpReceiver, otlpReceiver } from "./otlpReceiver.ts"

const CLI = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url))

const SECRET = "s3cr3t-value-7741"

/** Short export intervals, so a running server sends within the test. */
const FAST = { OTEL_BSP_SCHEDULE_DELAY: "100", OTEL_METRIC_EXPORT_INTERVAL: "200" }

/** A few CLI-runtime actions (one with a secret) exported by `otlpLayerFromEnv` configured by `env` alone. */
const actionsWithEnv = (env: Record<string, string>) =>
  Effect.gen(function*() {
    const rt = yield* Runtime
    yield* rt.addEnvVars({ API_TOKEN: Redacted.make(SECRET) })
    yield* rt.runCommand("echo $API_TOKEN")
    yield* rt.read("missing.txt")
  }).pipe(
    Effect.provide(Layer.fresh(CliRuntime.layer({ noChangeTimeoutSeconds: 1 }))),
    // Released here: what is left is flushed before this effect ends.
    Effect.provide(otlpLayerFromEnv()),
    Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env)))
  )

/** The error of building `otlpLayerFromEnv` configured by `env` alone. */
const refusal = (env: Record<string, string>) =>
  Effect.void.pipe(
    Effect.provide(otlpLayerFromEnv()),
    Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env))),
    Effect.flip
  )

/** Export to `receiver` as OTLP/JSON, which it decodes. */
const jsonExport = (receiver: OtlpReceiver) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
  OTEL_EXPORTER_OTLP_PROTOCOL: "http/json"
})

/** Assert that no payload holds any of `secrets`. */
const assertNoSecret = (receiver: OtlpReceiver, secrets: ReadonlyArray<string>) => {
  const everything = receiver.everything()
  assert.isAbove(everything.length, 0)
  for (const secret of secrets) assert.notInclude(everything, secret)
}

describe("OTLP export", () => {
  it.live(
    "the action server exports a span per action and the action counter; no secret in any payload",
    () =>
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

        const commands = () => receiver.spans().filter((s) => s.name === "CmdRunAction")
        yield* eventually(() => `spans: ${JSON.stringify(receiver.spans())}`, () => commands().length >= 3, 10_000)
        const spans = commands()
        assert.lengthOf(spans, 3)
        assert.deepStrictEqual(spans[0]!.attributes, { "runtime.kind": "server", "action.type": "run", exit_code: 0 })
        assert.strictEqual(spans[2]!.attributes["exit_code"], 3)
        assert.strictEqual(spans[0]!.serviceName, "effect-sandbox-server")
        const latest = () =>
          receiver.sums().filter((p) =>
            p.metric === "effect_sandbox_actions_total" && p.attributes["runtime.kind"] === "server"
          ).at(-1)
        yield* eventually(() => `counter: ${JSON.stringify(latest())}`, () => latest()?.value === 3, 10_000)
        const point = latest()!
        assert.deepStrictEqual(point.attributes, { "runtime.kind": "server", "action.type": "run" })
        assert.isTrue(point.monotonic, "a counter that only goes up")
        assert.isTrue(receiver.requests.every((r) => r.headers["x-collector-token"] === "tok-do-not-leak-9931"))

        yield* Scope.close(scope, Exit.void)
        assertNoSecret(receiver, [SECRET, server.key, "tok-do-not-leak-9931"])
      }),
    60_000
  )

  it.live(
    "in a library program: spans and counter of the CLI runtime, service name from the environment or the default",
    () =>
      Effect.gen(function*() {
        const receiver = yield* otlpReceiver
        const base = jsonExport(receiver)
        yield* actionsWithEnv(base)
        const spans = receiver.spans()
        assert.deepStrictEqual(
          spans.filter((s) => s.name === "CmdRunAction").map((s) => [s.serviceName, s.attributes]),
          [["effect-sandbox", { "runtime.kind": "cli", "action.type": "run", exit_code: 0 }]]
        )
        assert.deepStrictEqual(spans.find((s) => s.name === "Runtime.addEnvVars")?.attributes, {
          "runtime.kind": "cli",
          names: ["API_TOKEN"]
        })
        assert.isTrue(spans.some((s) => s.name === "FileReadAction"))
        const reads = receiver.sums().filter((p) =>
          p.metric === "effect_sandbox_actions_total" && p.attributes["action.type"] === "read"
        )
        assert.isAtLeast(reads.length, 1)
        assertNoSecret(receiver, [SECRET])

        const named = (env: Record<string, string>) =>
          Effect.gen(function*() {
            const before = receiver.spans().length
            yield* actionsWithEnv({ ...base, ...env })
            return [...new Set(receiver.spans().slice(before).map((s) => s.serviceName))]
          })
        assert.deepStrictEqual(yield* named({ OTEL_SERVICE_NAME: "my-agent" }), ["my-agent"])
        assert.deepStrictEqual(yield* named({ OTEL_RESOURCE_ATTRIBUTES: "team=x,service.name=from-attributes" }), [
          "from-attributes"
        ])
        assert.deepStrictEqual(
          yield* named({ OTEL_SERVICE_NAME: "wins", OTEL_RESOURCE_ATTRIBUTES: "service.name=loses" }),
          ["wins"]
        )
      }),
    60_000
  )

  it.live(
    "nothing is exported without an endpoint, with OTEL_SDK_DISABLED, or with the exporters set to none",
    () =>
      Effect.gen(function*() {
        const receiver = yield* otlpReceiver
        const endpoint = jsonExport(receiver)
        yield* actionsWithEnv({ OTEL_SERVICE_NAME: "x", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" })
        yield* actionsWithEnv({ ...endpoint, OTEL_SDK_DISABLED: "true" })
        yield* actionsWithEnv({ ...endpoint, OTEL_TRACES_EXPORTER: "none", OTEL_METRICS_EXPORTER: "none" })
        assert.deepStrictEqual(receiver.requests, [])
        // The receiver does answer: the same program with only the endpoint exports.
        yield* actionsWithEnv(endpoint)
        assert.isAbove(receiver.requests.length, 0)
      }),
    60_000
  )

  it.live(
    "LocalRuntime's server, given the endpoint, exports its action span into the client's trace",
    () =>
      Effect.gen(function*() {
        const receiver = yield* otlpReceiver
        const env = { ...jsonExport(receiver), ...FAST }
        yield* Effect.gen(function*() {
          const rt = yield* Runtime
          yield* rt.runCommand("true")
        }).pipe(
          Effect.provide(Layer.fresh(LocalRuntime.layer({ noChangeTimeoutSeconds: 1, env }))),
          Effect.provide(otlpLayerFromEnv()),
          Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env)))
        )
        const byService = (service: string) =>
          receiver.spans().find((s) => s.name === "CmdRunAction" && s.serviceName === service)
        // The server's last spans are flushed when it stops, with the runtime.
        yield* eventually("no server span", () => byService("effect-sandbox-server") !== undefined, 10_000)
        const client = byService("effect-sandbox")!
        const server = byService("effect-sandbox-server")!
        assert.strictEqual(client.attributes["runtime.kind"], "local")
        assert.strictEqual(server.attributes["runtime.kind"], "server")
        assert.strictEqual(server.traceId, client.traceId)
      }),
    60_000
  )

  it.effect("bad OTLP settings are one-line InvalidOptionsErrors naming the variable, never its value", () =>
    Effect.gen(function*() {
      const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }
      const cases: ReadonlyArray<readonly [Record<string, string>, string]> = [
        [
          { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4317", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
          "OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: use http/protobuf or http/json (the collector's HTTP port, usually 4318)."
        ],
        [
          { OTEL_EXPORTER_OTLP_ENDPOINT: "not a url" },
          "Invalid OpenTelemetry setting: OTEL_EXPORTER_OTLP_ENDPOINT: Expected a valid URL string"
        ],
        [
          { ...endpoint, OTEL_BSP_SCHEDULE_DELAY: "soon" },
          "Invalid OpenTelemetry setting: OTEL_BSP_SCHEDULE_DELAY: Expected a string representing a finite number"
        ],
        [
          { ...endpoint, OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%zzsecret-token" },
          "Invalid OpenTelemetry setting: OTEL_EXPORTER_OTLP_HEADERS: Expected object; " +
          "OTEL_EXPORTER_OTLP_HEADERS.authorization: Expected a valid URI component"
        ]
      ]
      for (const [env, message] of cases) {
        const error = yield* refusal(env)
        assert.instanceOf(error, InvalidOptionsError)
        assert.strictEqual(error.message, message)
      }
    }))

  it.live(
    "the CLI's run exports its action over OTLP/HTTP protobuf (the default) before it exits",
    () =>
      Effect.gen(function*() {
        const receiver = yield* otlpReceiver
        const workspace = yield* tempDir("otlp-cli-")
        const exit = yield* Effect.callback<{ code: number | null; stdout: string }>((resume) => {
          const child = spawn(process.execPath, [CLI, "run", "--workspace", workspace, "echo", "hello"], {
            env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint },
            stdio: ["ignore", "pipe", "inherit"]
          })
          let stdout = ""
          child.stdout.on("data", (chunk) => stdout += chunk)
          child.on("exit", (code) => resume(Effect.succeed({ code, stdout })))
        })
        assert.deepStrictEqual(exit, { code: 0, stdout: "hello\n" })
        const traces = receiver.requests.filter((r) => r.path === "/v1/traces")
        const metrics = receiver.requests.filter((r) => r.path === "/v1/metrics")
        assert.isAbove(traces.length, 0)
        assert.isAbove(metrics.length, 0)
        for (const r of [...traces, ...metrics]) assert.strictEqual(r.headers["content-type"], "application/x-protobuf")
        // Protobuf keeps strings as UTF-8: the span's name, its attributes, the service and the counter.
        const traceBytes = traces.map((r) => r.body.toString("utf8")).join("")
        for (const text of ["CmdRunAction", "runtime.kind", "cli", "action.type", "effect-sandbox"]) {
          assert.include(traceBytes, text)
        }
        assert.include(metrics.map((r) => r.body.toString("utf8")).join(""), "effect_sandbox_actions_total")
      }),
    60_000
  )

  it.live("`effect-sandbox serve` exports the actions it runs, flushing when stopped", () =>
    Effect.gen(function*() {
      const receiver = yield* otlpReceiver
      const workspace = yield* tempDir("otlp-serve-")
      const { SESSION_API_KEY: _, ...inherited } = process.env
      const child = yield* Effect.acquireRelease(
        Effect.sync(() =>
          spawn(process.execPath, [CLI, "serve", "0", "--working-dir", workspace], {
            env: { ...inherited, ...jsonExport(receiver) },
            stdio: ["ignore", "pipe", "inherit"]
          })
        ),
        (started) => Effect.sync(() => started.exitCode === null && started.kill("SIGKILL"))
      )
      const port = yield* Effect.callback<number>((resume) => {
        let out = ""
        child.stdout.on("data", (chunk) => {
          out += chunk
          const announced = /"port":(\d+)/.exec(out)?.[1]
          if (announced !== undefined) resume(Effect.succeed(Number(announced)))
        })
      })
      const reply = yield* Effect.promise(() =>
        fetch(`http://127.0.0.1:${port}/execute_action`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ action: { action: "run", args: { command: "exit 4" } } })
        }).then((r) => r.json())
      )
      assert.strictEqual(reply.extras.metadata.exit_code, 4)
      // Stopped before its export interval (5 s): the span arrives with the final flush.
      yield* Effect.callback<void>((resume) => {
        child.on("exit", () => resume(Effect.void))
        child.kill("SIGTERM")
      })
      const span = receiver.spans().find((s) => s.name === "CmdRunAction")
      assert.deepStrictEqual(span?.attributes, { "runtime.kind": "server", "action.type": "run", exit_code: 4 })
      assert.strictEqual(span?.serviceName, "effect-sandbox")
    }), 60_000)
})
