/**
 * OTLP export from `effect-sandbox-runtime-api`: given `OTEL_EXPORTER_OTLP_ENDPOINT`, the API
 * server exports a span per request under its own service name, as the action server does, and
 * neither its API key nor the one a refused request carried reaches a payload.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { call, startApiServer } from "../../scripts/runtimeApiProcess.ts"
import { describeDocker } from "../docker/infra.ts"
import { eventually } from "../eventually.ts"
import { otlpReceiver } from "./otlpReceiver.ts"

const KEY = "rapi-otlp-key-5190"
const WRONG = "rapi-otlp-wrong-key-2284"

describeDocker("OTLP export from the runtime API server", () => {
  describe("effect-sandbox-runtime-api", () => {
    it.live(
      "exports its request spans as effect-sandbox-runtime-api; no API key in any payload",
      () =>
        Effect.gen(function*() {
          const receiver = yield* otlpReceiver
          const server = yield* Effect.acquireRelease(
            Effect.promise(() =>
              startApiServer(["--container-name-prefix", "rapi-otlp"], {
                EFFECT_SANDBOX_API_KEY: KEY,
                OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
                OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
                OTEL_BSP_SCHEDULE_DELAY: "100"
              })
            ),
            (api) => Effect.promise(() => api.kill())
          )
          const listed = yield* Effect.promise(() => call(server.base, "GET", "/list", { key: KEY }))
          assert.strictEqual(listed.status, 200)
          const refused = yield* Effect.promise(() => call(server.base, "GET", "/list", { key: WRONG }))
          assert.isAtLeast(refused.status, 401)

          const ours = () => receiver.spans().filter((s) => s.serviceName === "effect-sandbox-runtime-api")
          yield* eventually(() => `spans: ${JSON.stringify(receiver.spans())}`, () => ours().length >= 2, 10_000)
          const everything = receiver.everything()
          assert.notInclude(everything, KEY)
          assert.notInclude(everything, WRONG)
        }).pipe(Effect.scoped),
      60_000
    )
  })
})
