import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import { join } from "node:path"
import { makeZip, stored, zeros } from "../executor/zipFixtures.ts"
import { assertAlive, assertDetail, call, fileForm, postJson, serverLayer, TestServer } from "./helpers.ts"

const MiB = 1024 * 1024

const q = (params: Record<string, string>) => `?${new URLSearchParams(params)}`

/** A body sent in chunks with no length: the server only learns its size by reading it. */
const chunked = (size: number) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (let sent = 0; sent < size; sent += MiB) controller.enqueue(new Uint8Array(MiB).fill(0x20))
      controller.close()
    }
  })

layer(
  serverLayer({
    env: {
      EFFECT_SANDBOX_MAX_JSON_BODY_BYTES: String(MiB),
      EFFECT_SANDBOX_MAX_UPLOAD_BYTES: String(4 * MiB),
      EFFECT_SANDBOX_MAX_DOWNLOAD_BYTES: String(MiB)
    }
  }),
  { excludeTestServices: true }
)("limits on a server with small ones (EFFECT_SANDBOX_MAX_*)", (it) => {
  it.effect("a JSON body over the limit is 413 without being read, and the server answers after", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const body = JSON.stringify({ action: { action: "run", args: { command: "x".repeat(2 * MiB) } } })
      const reply = yield* postJson(server, "/execute_action", body)
      assertDetail(reply, 413, "exceeds the JSON body limit of 1048576 bytes")
      assert.strictEqual(reply.headers.get("connection"), "close")
      yield* assertAlive(server)
    }))

  it.effect("a chunked JSON body over the limit is 413 too", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const reply = yield* call(server, "/v1/env", {
        method: "POST",
        body: chunked(64 * MiB),
        headers: { "content-type": "application/json" }
      })
      assertDetail(reply, 413, "exceeds the JSON body limit of 1048576 bytes")
      yield* assertAlive(server)
    }))

  it.effect("deep nesting is 400 before parsing; brackets inside strings do not count", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const deep = `{"action": ${"[".repeat(200)}${"]".repeat(200)}}`
      assertDetail(
        yield* postJson(server, "/execute_action", deep),
        400,
        "The JSON body is nested deeper than the limit of 128 levels."
      )
      const inString = yield* postJson(server, "/v1/env", { vars: { X: "[".repeat(500) } })
      assert.strictEqual(inString.status, 200, inString.text)
    }))

  it.effect("a body of 100,001 tiny arrays is 400 before parsing", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const many = `[${Array.from({ length: 100_001 }, () => "[]").join(",")}]`
      assertDetail(
        yield* postJson(server, "/execute_action", many),
        400,
        "more objects and arrays than the limit of 100000"
      )
    }))

  it.effect("an MCP proxy message is bounded like any JSON body; a good one is still accepted", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const sse = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const abort = new AbortController()
          const response = await fetch(`${server.baseUrl}/mcp/sse`, {
            headers: { "X-Session-API-Key": server.key },
            signal: abort.signal
          })
          const reader = response.body!.getReader()
          let text = ""
          while (!/sessionId=[\w-]+/.test(text)) text += new TextDecoder().decode((await reader.read()).value)
          return { abort, sessionId: /sessionId=([\w-]+)/.exec(text)![1]! }
        }),
        ({ abort }) => Effect.sync(() => abort.abort())
      )
      const path = `/mcp/messages?sessionId=${sse.sessionId}`
      const deep = yield* postJson(server, path, `{"jsonrpc":"2.0","id":1,"method":"ping","params":${"[".repeat(500)}}`)
      assertDetail(deep, 400, "nested deeper than the limit of 128 levels")
      const big = yield* postJson(server, path, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "x".repeat(2 * MiB) }))
      assertDetail(big, 413, "exceeds the JSON body limit of 1048576 bytes")
      const ping = yield* postJson(server, path, { jsonrpc: "2.0", id: 3, method: "ping" })
      assert.strictEqual(ping.status, 202, ping.text)
    }))

  it.effect("a download over the limit is 413 naming it; one within it is a zip", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const dir = join(server.workspace, "big")
      fs.mkdirSync(dir)
      fs.writeFileSync(join(dir, "a.bin"), new Uint8Array(2 * MiB))
      const reply = yield* call(server, `/download_files${q({ path: dir })}`)
      assertDetail(reply, 413, `The download of ${dir} exceeds the download limit of 1048576 bytes`)
      const root = yield* call(server, `/download_files${q({ path: "/" })}`)
      assertDetail(root, 413, "exceeds the")
      fs.writeFileSync(join(dir, "a.bin"), "small")
      const ok = yield* call(server, `/download_files${q({ path: dir })}`)
      assert.strictEqual(ok.status, 200, ok.text)
      assert.strictEqual(ok.headers.get("content-type"), "application/zip")
      assert.strictEqual(Buffer.from(ok.bytes.subarray(0, 4)).readUInt32LE(0), 0x04034b50)
    }))

  it.effect("uploads never write through a link in the destination (a linked directory, a dangling link)", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const outside = fs.mkdtempSync(join(os.tmpdir(), "outside-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(outside, { recursive: true, force: true })))
      const destination = join(server.workspace, "linked")
      fs.mkdirSync(destination)
      fs.symlinkSync(outside, join(destination, "dir"))
      fs.symlinkSync(join(outside, "new.txt"), join(destination, "new.txt"))
      const zip = makeZip([stored("ok.txt", "fine"), stored("dir/evil.txt", "pwned")])
      const viaDir = yield* call(server, `/upload_file${q({ destination, recursive: "true" })}`, {
        body: fileForm("tree.zip", zip)
      })
      assertDetail(viaDir, 400, "goes through the symbolic link dir in the destination")
      const plain = yield* call(server, `/upload_file${q({ destination })}`, { body: fileForm("new.txt", "pwned") })
      assertDetail(plain, 400, "is a symbolic link or directory")
      assert.deepStrictEqual(fs.readdirSync(outside), [])
      assert.deepStrictEqual(fs.readdirSync(destination).sort(), ["dir", "new.txt"])
    }))

  it.effect("an upload over the limit is 413 and writes nothing", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const destination = join(server.workspace, "up-big")
      const reply = yield* call(server, `/upload_file${q({ destination })}`, {
        body: fileForm("big.bin", new Uint8Array(5 * MiB))
      })
      assertDetail(reply, 413, "exceeds the upload limit of 4194304 bytes")
      assert.isFalse(fs.existsSync(join(destination, "big.bin")))
      yield* assertAlive(server)
    }))

  it.effect("a zip bomb upload is 413 and leaves the destination empty", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const destination = join(server.workspace, "up-bomb")
      const bomb = makeZip([{ name: "bomb.bin", method: 8, ...zeros(16) }])
      const reply = yield* call(server, `/upload_file${q({ destination, recursive: "true" })}`, {
        body: fileForm("bomb.zip", bomb)
      })
      assertDetail(reply, 413, "exceeds the compression ratio limit of 100 to 1")
      assert.deepStrictEqual(fs.readdirSync(destination), [])
    }))
})

/**
 * Run curl to completion while `/alive` is asked every 20 ms: how many asks, the 90th
 * percentile and the slowest answer, in ms. Before transfers were streamed, zipping a
 * big tree or reading a big upload held the event loop for seconds at a time.
 */
const slowestAliveDuring = (baseUrl: string, args: ReadonlyArray<string>) =>
  Effect.promise(async () => {
    const curl = spawn("curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", ...args])
    let status = ""
    curl.stdout.on("data", (d: Buffer) => status += d.toString())
    const done = new Promise<number>((resolve) => curl.on("exit", (code) => resolve(code ?? -1)))
    const state = { finished: false }
    void done.then(() => state.finished = true)
    const times: Array<number> = []
    while (!state.finished) {
      const started = performance.now()
      const reply = await fetch(`${baseUrl}/alive`)
      await reply.arrayBuffer()
      times.push(performance.now() - started)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    times.sort((a, b) => a - b)
    const p90 = times[Math.floor(times.length * 0.9)] ?? 0
    const slowest = times.at(-1) ?? 0
    return {
      exit: await done,
      status,
      asked: times.length,
      p90,
      slowest,
      summary: `p90 ${p90.toFixed(0)} ms, slowest ${slowest.toFixed(0)} ms over ${times.length} asks`
    }
  })

/**
 * /alive stays responsive: 90% of answers within 100 ms, none held a second. (On a machine
 * shared by many busy processes even an idle server's slowest answer reaches ~500 ms, so
 * the bound on the slowest is a stall detector, not a latency target.)
 */
const assertResponsive = (run: { readonly p90: number; readonly slowest: number; readonly summary: string }) => {
  assert.isBelow(run.p90, 100, run.summary)
  assert.isBelow(run.slowest, 1000, run.summary)
}

// The ratio limit is lifted so that zeros, cheap to make, can stand for a big honest zip.
layer(serverLayer({ env: { EFFECT_SANDBOX_MAX_ZIP_RATIO: "100000" } }), { excludeTestServices: true })(
  "the server stays responsive during big transfers",
  (it) => {
    it.effect("/alive stays responsive while 256 MiB is zipped and downloaded", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const dir = join(server.workspace, "large")
        fs.mkdirSync(dir)
        fs.closeSync(fs.openSync(join(dir, "zeros.bin"), "w"))
        fs.truncateSync(join(dir, "zeros.bin"), 256 * MiB)
        const url = `${server.baseUrl}/download_files${q({ path: dir })}`
        const run = yield* slowestAliveDuring(server.baseUrl, ["-H", `X-Session-API-Key: ${server.key}`, url])
        assert.deepStrictEqual([run.exit, run.status], [0, "200"])
        assertResponsive(run)
        assert.isAbove(run.asked, 5, "the download took long enough to measure")
      }), 120_000)

    it.effect("/alive stays responsive while an uploaded zip expands to 256 MiB", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const file = join(server.workspace, "zeros.zip")
        fs.writeFileSync(file, makeZip([{ name: "zeros.bin", method: 8, ...zeros(4) }]))
        const destination = join(server.workspace, "in")
        const url = `${server.baseUrl}/upload_file${q({ destination, recursive: "true" })}`
        const run = yield* slowestAliveDuring(server.baseUrl, [
          "-H",
          `X-Session-API-Key: ${server.key}`,
          "-F",
          `file=@${file}`,
          url
        ])
        assert.deepStrictEqual([run.exit, run.status], [0, "200"])
        assert.strictEqual(fs.statSync(join(destination, "zeros.bin")).size, 256 * MiB)
        assertResponsive(run)
      }), 120_000)
  }
)
