/** Every endpoint of the action server answers as OpenHands' does (spec §2.4), over real HTTP. */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { unzipSync, zipSync } from "fflate"
import { randomBytes } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { echoTool, everythingServer } from "../conformance/mcp.ts"
import { assertDetail, call, fileForm, json, postJson, run, serverLayer, streamAction, TestServer } from "./helpers.ts"

const q = (params: Record<string, string>) => `?${new URLSearchParams(params)}`
/** OpenHands' CmdOutputMetadata fields, sorted. */
const METADATA_KEYS = [
  "exit_code",
  "hostname",
  "pid",
  "prefix",
  "py_interpreter_path",
  "suffix",
  "username",
  "working_dir"
]
const bytesOf = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 7 + 3) % 256)

layer(serverLayer(), { excludeTestServices: true })("action server endpoints", (it) => {
  it.effect("GET /alive is {\"status\": \"ok\"}", () =>
    Effect.gen(function*() {
      const reply = yield* call(yield* TestServer, "/alive")
      assert.strictEqual(reply.status, 200)
      assert.deepStrictEqual(json(reply), { status: "ok" })
    }))

  it.effect("GET /server_info reports uptime, idle time and sane resource figures", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* run(server, "true")
      yield* Effect.sleep("300 millis")
      const info = json(yield* call(server, "/server_info"))
      assert.deepStrictEqual(Object.keys(info).sort(), ["idle_time", "resources", "uptime"])
      assert.isAtLeast(info.idle_time, 0.25) // since the action above
      assert.isBelow(info.idle_time, 5)
      assert.isAtLeast(info.uptime, info.idle_time)
      const { cpu_percent, memory, disk, io } = info.resources
      assert.isAtLeast(cpu_percent, 0)
      assert.isAbove(memory.rss, 1024 * 1024)
      assert.isAtLeast(memory.vms, memory.rss)
      assert.isAbove(memory.percent, 0)
      assert.isAtMost(memory.percent, 100)
      assert.isAbove(disk.total, 0)
      assert.isAtMost(disk.used, disk.total)
      assert.isAtMost(disk.free, disk.total)
      assert.isAtLeast(disk.percent, 0)
      assert.isAtMost(disk.percent, 100)
      assert.isAtLeast(io.read_bytes, 0)
      assert.isAtLeast(io.write_bytes, 0)
    }))

  it.effect("POST /execute_action runs `echo hi` into OpenHands' observation JSON", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const obs = yield* run(server, "echo hi")
      assert.deepStrictEqual(Object.keys(obs).sort(), ["content", "extras", "message", "observation", "success"])
      assert.strictEqual(obs.message, "Command `echo hi` executed with exit code 0.")
      assert.strictEqual(obs.observation, "run")
      assert.strictEqual(obs.content, "hi")
      assert.strictEqual(obs.success, true)
      assert.strictEqual(obs.extras.command, "echo hi")
      assert.strictEqual(obs.extras.hidden, false)
      assert.deepStrictEqual(Object.keys(obs.extras.metadata).sort(), METADATA_KEYS)
      assert.strictEqual(obs.extras.metadata.exit_code, 0)
      assert.strictEqual(obs.extras.metadata.working_dir, server.workspace)
      assert.strictEqual(obs.extras.metadata.suffix, "\n[The command completed with exit code 0.]")
    }))

  it.effect("POST /list_files: directories first with `/`, each group case-insensitive; [] when missing", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const dir = join(server.workspace, "listing")
      for (const d of ["c", "B", "a_dir"]) mkdirSync(join(dir, d), { recursive: true })
      for (const f of ["Zeta.txt", "alpha", ".hidden", "beta"]) writeFileSync(join(dir, f), "")
      const expected = ["a_dir/", "B/", "c/", ".hidden", "alpha", "beta", "Zeta.txt"]
      assert.deepStrictEqual(json(yield* postJson(server, "/list_files", { path: dir })), expected)
      assert.deepStrictEqual(json(yield* postJson(server, "/list_files", { path: "listing" })), expected)
      const root = json(yield* call(server, "/list_files", { method: "POST" }))
      assert.include(root, "listing/")
      assert.deepStrictEqual(json(yield* postJson(server, "/list_files", {})), root)
      assert.deepStrictEqual(json(yield* postJson(server, "/list_files", { path: `${dir}/missing` })), [])
      assert.deepStrictEqual(json(yield* postJson(server, "/list_files", { path: `${dir}/alpha` })), [])
    }))

  it.effect("POST /list_files reads a chunked body (no content-length)", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      mkdirSync(join(server.workspace, "chunked/inner"), { recursive: true })
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(JSON.stringify({ path: join(server.workspace, "chunked") })))
          controller.close()
        }
      })
      const reply = yield* call(server, "/list_files", { body, headers: { "content-type": "application/json" } })
      assert.deepStrictEqual(json(reply), ["inner/"])
    }))

  it.effect("POST /upload_file stores a single file in the destination directory", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const destination = join(server.workspace, "up/single")
      const content = bytesOf(3000)
      const reply = yield* call(server, `/upload_file${q({ destination })}`, { body: fileForm("data.bin", content) })
      assert.strictEqual(reply.status, 200, reply.text)
      assert.deepStrictEqual(json(reply), { filename: "data.bin", destination, recursive: false })
      assert.deepStrictEqual(new Uint8Array(readFileSync(join(destination, "data.bin"))), content)
    }))

  it.effect("POST /upload_file?recursive=true extracts a zip of a tree, binary bytes intact", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const destination = join(server.workspace, "up/tree")
      const random = new Uint8Array(randomBytes(100_000))
      const zip = zipSync({
        "tree/": new Uint8Array(),
        "tree/random.bin": random,
        "tree/nested/all-bytes.bin": bytesOf(256),
        "top.txt": new TextEncoder().encode("top\n")
      })
      const url = `/upload_file${q({ destination, recursive: "true" })}`
      const reply = yield* call(server, url, { body: fileForm("tree.zip", zip) })
      assert.strictEqual(reply.status, 200, reply.text)
      assert.deepStrictEqual(new Uint8Array(readFileSync(join(destination, "tree/random.bin"))), random)
      assert.deepStrictEqual(
        new Uint8Array(readFileSync(join(destination, "tree/nested/all-bytes.bin"))),
        bytesOf(256)
      )
      assert.strictEqual(readFileSync(join(destination, "top.txt"), "utf8"), "top\n")
      assert.deepStrictEqual(readdirSync(destination).sort(), ["top.txt", "tree"]) // the zip itself is gone
    }))

  it.effect("POST /upload_file takes a file larger than the 32 MiB JSON body limit", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const destination = join(server.workspace, "up/big")
      const content = new Uint8Array(randomBytes(70 * 1024 * 1024))
      const reply = yield* call(server, `/upload_file${q({ destination })}`, { body: fileForm("big.bin", content) })
      assert.strictEqual(reply.status, 200, reply.text)
      assert.isTrue(Buffer.from(content).equals(readFileSync(join(destination, "big.bin"))))
    }), 60_000)

  it.effect("POST /upload_file refuses a relative destination and a recursive non-zip", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const relative = yield* call(server, `/upload_file${q({ destination: "relative/dir" })}`, {
        body: fileForm("a.txt", "a")
      })
      assertDetail(relative, 400, "Destination must be an absolute path")
      const destination = join(server.workspace, "up/not-zip")
      const notZip = yield* call(server, `/upload_file${q({ destination, recursive: "true" })}`, {
        body: fileForm("a.txt", "a")
      })
      assertDetail(notZip, 400, "Recursive uploads must be zip files")
      assert.isFalse(existsSync(join(destination, "a.txt")))
    }))

  it.effect("GET /download_files zips a directory's contents and a single file", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const dir = join(server.workspace, "down")
      mkdirSync(join(dir, "sub"), { recursive: true })
      const random = new Uint8Array(randomBytes(50_000))
      writeFileSync(join(dir, "sub/random.bin"), random)
      writeFileSync(join(dir, "text.txt"), "some text\n")
      const reply = yield* call(server, `/download_files${q({ path: dir })}`)
      assert.strictEqual(reply.status, 200, reply.text)
      assert.strictEqual(reply.headers.get("content-type"), "application/zip")
      assert.include(reply.headers.get("content-disposition") ?? "", "down.zip")
      const entries = unzipSync(reply.bytes)
      assert.deepStrictEqual(Object.keys(entries).filter((n) => !n.endsWith("/")).sort(), [
        "sub/random.bin",
        "text.txt"
      ])
      assert.deepStrictEqual(entries["sub/random.bin"], random)
      assert.strictEqual(new TextDecoder().decode(entries["text.txt"]), "some text\n")
      const single = yield* call(server, `/download_files${q({ path: join(dir, "sub/random.bin") })}`)
      assert.strictEqual(single.status, 200, single.text)
      assert.deepStrictEqual(unzipSync(single.bytes), { "random.bin": random })
    }))

  it.effect("GET /download_files of a directory with a non-ASCII name", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const dir = join(server.workspace, "données-日本")
      mkdirSync(dir)
      writeFileSync(join(dir, "a.txt"), "a")
      const reply = yield* call(server, `/download_files${q({ path: dir })}`)
      assert.strictEqual(reply.status, 200, reply.text)
      assert.deepStrictEqual(Object.keys(unzipSync(reply.bytes)), ["a.txt"])
    }))

  it.effect("GET /download_files: 400 for a relative path, 404 for a missing one", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      assertDetail(yield* call(server, `/download_files${q({ path: "relative/x" })}`), 400, "absolute")
      assertDetail(yield* call(server, `/download_files${q({ path: "/no/such/path" })}`), 404, "not found")
    }))

  it.effect("POST /update_mcp_server takes a list of stdio servers and refuses anything else", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const servers = [{ name: "fetch", command: "uvx", args: ["mcp-server-fetch"], env: { A: "1" } }]
      const ok = yield* postJson(server, "/update_mcp_server", servers)
      assert.strictEqual(ok.status, 200, ok.text)
      assert.strictEqual(json(ok).detail, "MCP server updated successfully")
      assert.strictEqual(typeof json(ok).router_error_log, "string")
      const notList = yield* postJson(server, "/update_mcp_server", { name: "fetch", command: "uvx" })
      assertDetail(notList, 400, "Request must be a list of MCP tools to sync")
    }))

  it.effect("GET /v1/capabilities: nothing unavailable on a server started without tools", () =>
    Effect.gen(function*() {
      const reply = yield* call(yield* TestServer, "/v1/capabilities")
      assert.strictEqual(reply.status, 200, reply.text)
      assert.deepStrictEqual(json(reply), { unavailable: {} })
    }))

  it.effect("GET /v1/mcp/tools lists the tools of the servers /update_mcp_server set, with their server", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const set = yield* postJson(server, "/update_mcp_server", [{ ...everythingServer, name: "ev" }])
      assert.deepStrictEqual(json(set), { detail: "MCP server updated successfully", router_error_log: "" })
      const listed = yield* call(server, "/v1/mcp/tools")
      assert.strictEqual(listed.status, 200, listed.text)
      const tools = json(listed).tools as Array<Record<string, unknown>>
      assert.deepStrictEqual(Object.keys(json(listed)), ["tools"])
      assert.deepStrictEqual(tools.find((t) => t.name === "echo"), { ...echoTool("ev") })
      assert.deepStrictEqual(new Set(tools.map((t) => t.server)), new Set(["ev"]))
      yield* postJson(server, "/update_mcp_server", [])
      assert.deepStrictEqual(json(yield* call(server, "/v1/mcp/tools")), { tools: [] })
    }))

  it.effect("GET /vscode/connection_token is {\"token\": null}", () =>
    Effect.gen(function*() {
      const reply = yield* call(yield* TestServer, "/vscode/connection_token")
      assert.strictEqual(reply.status, 200)
      assert.deepStrictEqual(json(reply), { token: null })
    }))

  it.effect("POST /v1/env exports variables to the session's next commands", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const reply = yield* postJson(server, "/v1/env", { vars: { X: "it's $here" } })
      assert.strictEqual(reply.status, 200, reply.text)
      assert.strictEqual((yield* run(server, "echo \"$X\"")).content, "it's $here")
    }))

  it.effect("POST /v1/env with \"secrets\": the server masks their values in observations and streamed output", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const secret = "srv-Qz8Wv3Jp8Lm4"
      const reply = yield* postJson(server, "/v1/env", {
        vars: { SRV_TOKEN: secret, SRV_PLAIN: "shown" },
        secrets: ["SRV_TOKEN"]
      })
      assert.strictEqual(reply.status, 200, reply.text)
      const observation = yield* run(server, "echo \"$SRV_TOKEN $SRV_PLAIN\"")
      assert.strictEqual(observation.content, "<redacted> shown")
      // Printed in two writes, so the secret spans two output chunks.
      const command = "printf %s \"${SRV_TOKEN:0:5}\"; sleep 0.3; echo \"${SRV_TOKEN:5}\""
      const events = yield* streamAction(server, { action: { action: "run", args: { command } } })
      const streamed = events.slice(0, -1).map(({ event }) => event.text as string).join("")
      assert.notInclude(streamed, secret.slice(0, 5))
      assert.include(streamed, "<redacted>")
      assert.strictEqual(events.at(-1)!.event.observation.content, "<redacted>")
    }))

  it.effect("POST /v1/execute_action/stream sends output while the command runs, then the observation", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const command = "for i in 1 2 3; do echo $i; sleep 0.2; done"
      const events = yield* streamAction(server, { action: { action: "run", args: { command } } })
      const last = events.at(-1)!
      assert.strictEqual(last.event.type, "observation")
      const outputs = events.slice(0, -1)
      assert.isAbove(outputs.length, 0)
      for (const { event } of outputs) assert.strictEqual(event.type, "output")
      // The first output came well before the command finished: it was streamed, not buffered.
      assert.isAbove(last.at - outputs[0]!.at, 250)
      const text = outputs.map(({ event }) => event.text as string).join("")
      const observation = last.event.observation
      assert.strictEqual(observation.observation, "run")
      assert.strictEqual(observation.content, "1\n2\n3")
      assert.strictEqual(text.replace(/[\r\n]/g, ""), observation.content.replace(/\n/g, ""))
      assert.strictEqual(observation.extras.metadata.exit_code, 0)
    }))
})
