/** `/v1/processes`: the wire form of background processes, its gate, its refusals and its limits. */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { eventually } from "../eventually.ts"
import {
  assertDetail,
  call,
  isRunning,
  json,
  markedProcesses,
  postJson,
  serverLayer,
  TestServer,
  type TestServerShape
} from "./helpers.ts"

const KEY = "processes-key-0123456789"

const start = (server: TestServerShape, command: string) =>
  postJson(server, "/v1/processes", { command }).pipe(
    Effect.map((reply) => {
      assert.strictEqual(reply.status, 200, reply.text)
      return json(reply) as { readonly id: string; readonly pid: number }
    })
  )

/** `start`, and DELETE when the test's scope closes (a failed test leaves no process to count against the limit). */
const started = (server: TestServerShape, command: string) =>
  Effect.acquireRelease(
    start(server, command),
    ({ id }) => Effect.ignore(call(server, `/v1/processes/${id}`, { method: "DELETE" }))
  )

const lines = (text: string) => text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l))

/** Every process endpoint for process `id`, with a request that would change something if it got through. */
const endpoints = (id: string, marker: string) =>
  [
    ["POST /v1/processes", "/v1/processes", "POST", { command: `touch ${marker}` }],
    ["GET output", `/v1/processes/${id}/output`, "GET", undefined],
    ["POST stdin", `/v1/processes/${id}/stdin`, "POST", { text: "x\n" }],
    ["DELETE stdin", `/v1/processes/${id}/stdin`, "DELETE", undefined],
    ["POST signal", `/v1/processes/${id}/signal`, "POST", { signal: "SIGKILL" }],
    ["GET wait", `/v1/processes/${id}/wait`, "GET", undefined],
    ["DELETE", `/v1/processes/${id}`, "DELETE", undefined]
  ] as const

const send = (server: TestServerShape, path: string, method: string, body: unknown, auth: boolean | string = true) =>
  call(server, path, {
    method,
    auth,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { "content-type": "application/json" } })
  })

layer(
  serverLayer({
    key: KEY,
    env: { EFFECT_SANDBOX_MAX_PROCESSES: "2", EFFECT_SANDBOX_MAX_PROCESS_OUTPUT_BYTES: "1024" }
  }),
  { excludeTestServices: true }
)("background processes over HTTP", (it) => {
  it.effect("output is NDJSON ending with the exit; wait answers the exit; DELETE forgets the process", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { id, pid } = yield* started(server, "echo out; echo err >&2; exit 4")
      assert.match(id, /^[0-9]+$/)
      assert.isAbove(pid, 1)
      const wait = yield* call(server, `/v1/processes/${id}/wait`)
      assert.deepStrictEqual(json(wait), { exitCode: 4, signal: null })
      const output = yield* call(server, `/v1/processes/${id}/output`)
      assert.strictEqual(output.status, 200)
      assert.include(output.headers.get("content-type") ?? "", "ndjson")
      const events = lines(output.text)
      assert.deepStrictEqual(events.at(-1), { type: "exit", exitCode: 4, signal: null })
      assert.sameDeepMembers(events.slice(0, -1), [
        { type: "output", stream: "stdout", text: "out\n" },
        { type: "output", stream: "stderr", text: "err\n" }
      ])
      assert.deepStrictEqual(json(yield* send(server, `/v1/processes/${id}`, "DELETE", undefined)), { detail: "OK" })
      assertDetail(
        yield* send(server, `/v1/processes/${id}`, "DELETE", undefined),
        404,
        `No background process ${id} in this session (its scope closed, or it never existed).`
      )
    }).pipe(Effect.scoped))

  it.effect("every endpoint is 403 without the key or with a wrong one, and nothing starts", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { id } = yield* started(server, "exec sleep 30")
      const marker = join(server.workspace, "spawned-without-key")
      for (const [name, path, method, body] of endpoints(id, marker)) {
        for (const auth of [false, "wrong-key"]) {
          const reply = yield* send(server, path, method, body, auth)
          assert.strictEqual(reply.status, 403, `${name} (${auth}): ${reply.text}`)
          assert.deepStrictEqual(json(reply), { detail: "Invalid API Key" })
        }
      }
      const sleeping = () => markedProcesses(server.sessionId).find((p) => p.cmdline === "sleep 30")
      yield* eventually("the process did not survive the refused requests", () => sleeping() !== undefined)
      const process = sleeping()
      assert.isFalse(existsSync(marker))
      yield* send(server, `/v1/processes/${id}`, "DELETE", undefined)
      yield* eventually("the process outlived its DELETE", () => !isRunning(process!.pid, "sleep"))
    }).pipe(Effect.scoped))

  it.effect("an unknown id is 404 on every endpoint, with the reason", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      for (const [name, path, method, body] of endpoints("999", "unused").slice(1)) {
        const reply = yield* send(server, path, method, body)
        assertDetail(reply, 404, "No background process 999 in this session (its scope closed, or it never existed).")
        assert.strictEqual(reply.status, 404, name)
      }
    }).pipe(Effect.scoped))

  it.effect("bad bodies and requests are 400 with a one-line reason", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      assertDetail(
        yield* postJson(server, "/v1/processes", { cmd: "ls" }),
        400,
        "Invalid process: command: Missing key"
      )
      assertDetail(yield* postJson(server, "/v1/processes", "[1"), 400, "The request body is not valid JSON")
      assertDetail(
        yield* postJson(server, "/v1/processes", { command: "true", env: { "BAD-NAME": "x" } }),
        400,
        "Invalid environment variable names: BAD-NAME. Use letters, digits and _ only."
      )
      const { id } = yield* started(server, "exec sleep 30")
      assertDetail(
        yield* postJson(server, `/v1/processes/${id}/signal`, { name: "SIGTERM" }),
        400,
        "The body must be a JSON object {\"signal\": \"...\"}."
      )
      assertDetail(
        yield* postJson(server, `/v1/processes/${id}/signal`, { signal: "TERM!" }),
        400,
        "Unknown signal \"TERM!\": use a name such as SIGTERM."
      )
      assertDetail(yield* postJson(server, `/v1/processes/${id}/stdin`, { text: 1 }), 400, "{\"text\": \"...\"}")
      yield* send(server, `/v1/processes/${id}`, "DELETE", undefined)
    }).pipe(Effect.scoped))

  it.effect("at most EFFECT_SANDBOX_MAX_PROCESSES at once; output kept up to EFFECT_SANDBOX_MAX_PROCESS_OUTPUT_BYTES", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const a = yield* started(server, "head -c 5000 /dev/zero | tr '\\0' x; echo; echo tail")
      const b = yield* started(server, "exec sleep 30")
      assertDetail(
        yield* postJson(server, "/v1/processes", { command: "true" }),
        400,
        "The session holds its limit of background processes (EFFECT_SANDBOX_MAX_PROCESSES=2): " +
          "close a process's scope (or DELETE it) before starting another."
      )
      yield* call(server, `/v1/processes/${a.id}/wait`)
      const events = lines((yield* call(server, `/v1/processes/${a.id}/output`)).text)
      assert.deepInclude(events[0], { type: "output", stream: "stderr" })
      assert.match(
        events[0].text,
        /^\[\d+ bytes of earlier output dropped: a background process keeps its last 1024 bytes\]\n$/
      )
      const kept = events.filter((e) => e.type === "output" && e.stream === "stdout").map((e) => e.text).join("")
      assert.strictEqual(kept, `${"x".repeat(1024 - "\ntail\n".length)}\ntail\n`)
      assert.strictEqual(
        events[0].text,
        `[${5006 - 1024} bytes of earlier output dropped: a background process keeps its last 1024 bytes]\n`
      )
      for (const { id } of [a, b]) yield* send(server, `/v1/processes/${id}`, "DELETE", undefined)
      yield* started(server, "true")
    }).pipe(Effect.scoped))

  it.effect("a process carries the session marker (the reaper finds it) and never the session key", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { id, pid } = yield* started(server, "exec sleep 31")
      // Until `exec` is done: before, the process is the shell whose own command line names
      // `sleep 31` too, and during `execve` its environment reads empty for a moment. The
      // reaper's scan (markedProcesses) must find the program itself, by its marker.
      yield* eventually(
        "the reaper's scan never found sleep 31 by its marker",
        () => markedProcesses(server.sessionId).some((p) => p.pid === pid && p.cmdline === "sleep 31")
      )
      const environ = readFileSync(`/proc/${pid}/environ`, "latin1")
      assert.include(environ, `EFFECT_SANDBOX_SESSION=${server.sessionId}/process-${id}\0`)
      assert.notInclude(environ, KEY)
      assert.notInclude(environ, "SESSION_API_KEY=")
      yield* send(server, `/v1/processes/${id}`, "DELETE", undefined)
    }).pipe(Effect.scoped))
})
