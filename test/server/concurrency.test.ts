/** Concurrent requests: actions run one at a time, the rest of the server stays responsive. */
import { assert, layer } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { call, json, postJson, run, runAction, serverLayer, TestServer } from "./helpers.ts"

layer(serverLayer(), { excludeTestServices: true })("concurrent requests", (it) => {
  it.effect("8 concurrent /execute_action requests each get their own, unmixed output, one at a time", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const log = join(server.workspace, "order.log")
      const ids = [1, 2, 3, 4, 5, 6, 7, 8]
      const started = performance.now()
      const observations = yield* Effect.all(
        ids.map((n) =>
          run(server, `echo start-${n}; echo start-${n} >> ${log}; sleep 0.1; echo end-${n}; echo end-${n} >> ${log}`)
        ),
        { concurrency: "unbounded" }
      )
      const elapsed = performance.now() - started
      for (const [i, obs] of observations.entries()) {
        assert.strictEqual(obs.content, `start-${ids[i]}\nend-${ids[i]}`)
        assert.strictEqual(obs.extras.metadata.exit_code, 0)
      }
      // Serialised: every start is followed by its own end before the next start.
      const lines = readFileSync(log, "utf8").trim().split("\n")
      assert.strictEqual(lines.length, 16)
      for (let i = 0; i < lines.length; i += 2) {
        const n = lines[i]!.replace("start-", "")
        assert.strictEqual(lines[i], `start-${n}`)
        assert.strictEqual(lines[i + 1], `end-${n}`)
      }
      assert.sameMembers(lines.filter((l) => l.startsWith("start-")), ids.map((n) => `start-${n}`))
      assert.isAtLeast(elapsed, 8 * 100 * 0.9)
    }))

  it.effect("/alive and /server_info answer at once while a long command runs", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const long = yield* Effect.forkChild(run(server, "sleep 2.5; echo slept"))
      yield* Effect.sleep("300 millis")
      const sequential: Array<number> = []
      for (let i = 0; i < 10; i++) {
        const t = performance.now()
        const reply = yield* call(server, "/alive")
        sequential.push(performance.now() - t)
        assert.deepStrictEqual(json(reply), { status: "ok" })
      }
      const t = performance.now()
      const parallel = yield* Effect.all(
        Array.from({ length: 20 }, (_, i) => call(server, i % 4 === 0 ? "/server_info" : "/alive")),
        { concurrency: "unbounded" }
      )
      const parallelMs = performance.now() - t
      for (const reply of parallel) assert.strictEqual(reply.status, 200)
      assert.isBelow(Math.max(...sequential), 500, `alive latencies ${sequential.map(Math.round)}`)
      assert.isBelow(parallelMs, 1_000)
      assert.isUndefined(long.pollUnsafe(), "the command was still running while /alive answered")
      const obs = yield* Fiber.join(long)
      assert.strictEqual(obs.content, "slept")
    }))

  it.effect("a streamed action and a plain one do not interleave", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const stream = postJson(
        server,
        "/v1/execute_action/stream",
        runAction("for i in 1 2 3; do echo s$i; sleep 0.1; done")
      )
      const [streamed, plain] = yield* Effect.all([stream, run(server, "echo plain")], { concurrency: "unbounded" })
      assert.strictEqual(plain.content, "plain")
      const events = streamed.text.trim().split("\n").map((line) => JSON.parse(line))
      const observation = events.at(-1)
      assert.strictEqual(observation.type, "observation")
      assert.strictEqual(observation.observation.content, "s1\ns2\ns3")
      const output = events.slice(0, -1).map((e) => e.text).join("")
      assert.notInclude(output, "plain")
    }))

  it.effect("a request abandoned by its client leaves the session usable", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const abandoned = yield* Effect.forkChild(run(server, "sleep 1.5; echo abandoned"))
      yield* Effect.sleep("300 millis")
      yield* Fiber.interrupt(abandoned) // aborts the fetch: the connection closes mid-action
      const next = yield* run(server, "echo after-abort")
      assert.strictEqual(next.content, "after-abort")
      assert.strictEqual(next.extras.metadata.exit_code, 0)
      assert.strictEqual((yield* run(server, "echo again")).content, "again")
    }))
})
