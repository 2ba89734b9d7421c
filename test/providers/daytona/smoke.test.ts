import { assert, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { DaytonaRuntime } from "../../../src/daytona.ts"
import { Runtime } from "../../../src/index.ts"
import { baseImage } from "../../docker/infra.ts"
import { standIn } from "./server.ts"
import { snapshotImage } from "./snapshot.ts"

it.live("smoke", () =>
  Effect.gen(function*() {
    const image = yield* snapshotImage(baseImage())
    const s = yield* standIn({ snapshots: { "effect-sandbox-runtime": image } })
    const out = yield* Effect.gen(function*() {
      const rt = yield* Runtime
      return yield* rt.runCommand("echo hi; whoami; pwd")
    }).pipe(Effect.provide(DaytonaRuntime.layer({ apiKey: Redacted.make(s.apiKey), apiUrl: s.apiUrl })))
    console.log(out.content, s.requests.map((r) => `${r.method} ${r.path}`))
    assert.strictEqual(out.exitCode, 0)
  }).pipe(Effect.scoped), 300_000)
