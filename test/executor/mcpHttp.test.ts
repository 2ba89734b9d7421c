/**
 * MCP over HTTP: server-everything as a child process on 127.0.0.1 (streamable HTTP, and legacy SSE),
 * reached through CliRuntime's `remote` option (beside a stdio one, to pin which
 * server a call goes to), and a remote server that cannot be reached.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { createServer } from "node:net"
import { CliRuntime, McpObservation, Runtime, RuntimeStartError } from "../../src/index.ts"
import { assertEverythingTools, everythingServer } from "../conformance/mcp.ts"

/**
 * Preloaded into the server: its `listen(PORT)` binds 127.0.0.1 on a port the OS
 * chooses (no probe-then-bind race), and the port is announced on stderr.
 */
const LOOPBACK_PRELOAD = `data:text/javascript,${
  encodeURIComponent(`
import net from "node:net"
const listen = net.Server.prototype.listen
net.Server.prototype.listen = function (...args) {
  this.once("listening", () => process.stderr.write("LISTENING " + this.address().port + "\\n"))
  return listen.call(this, 0, "127.0.0.1", args.find((a) => typeof a === "function"))
}
`)
}`

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : once(child, "exit").then(() => undefined)

/** server-everything over HTTP (streamable, or legacy SSE); killed (and awaited) when the scope closes. */
const httpEverything = (env: Readonly<Record<string, string>>, transport: "http" | "sse" = "http") =>
  Effect.acquireRelease(
    Effect.promise(() => {
      const child = spawn(process.execPath, [
        "--import",
        LOOPBACK_PRELOAD,
        everythingServer.args[0]!,
        transport === "http" ? "streamableHttp" : "sse"
      ], {
        env: { ...process.env, ...env },
        stdio: ["ignore", "ignore", "pipe"]
      })
      return new Promise<{ child: ChildProcess; url: string }>((resolve, reject) => {
        let seen = ""
        child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
          seen += chunk
          const port = /LISTENING (\d+)/.exec(seen)?.[1]
          if (port !== undefined) {
            resolve({ child, url: `http://127.0.0.1:${port}/${transport === "http" ? "mcp" : "sse"}` })
          }
        })
        child.on("exit", (code) => reject(new Error(`server-everything exited (${code}) before listening: ${seen}`)))
      })
    }),
    ({ child }) =>
      Effect.promise(() => {
        child.kill("SIGKILL")
        return exited(child)
      })
  )

/** A loopback port nothing listens on (bound, then released). */
const closedPort = Effect.promise(() =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
)

const getEnv = (rt: Runtime["Service"], name: string) =>
  Effect.gen(function*() {
    const obs = yield* rt.callTool({ name: "get-env" })
    assert.instanceOf(obs, McpObservation, obs.content)
    return JSON.parse(JSON.parse(obs.content).content[0].text)[name] as string | undefined
  })

describe("MCP over HTTP (CliRuntime remote)", () => {
  for (const transport of ["http", "sse"] as const) {
    it.live(`calls a tool of a server over ${transport} and lists its tools`, () =>
      Effect.gen(function*() {
        const { url } = yield* httpEverything({}, transport)
        const layer = CliRuntime.layer({ mcp: { remote: [{ name: `everything-${transport}`, url, transport }] } })
        yield* Effect.gen(function*() {
          const rt = yield* Runtime
          assert.isTrue(rt.info.capabilities.mcp)
          const obs = yield* rt.callTool({ name: "get-sum", arguments: { a: 2, b: 40 } })
          assert.instanceOf(obs, McpObservation, obs.content)
          assert.deepStrictEqual(JSON.parse(obs.content), {
            content: [{ type: "text", text: "The sum of 2 and 40 is 42." }]
          })
          yield* assertEverythingTools(rt, `everything-${transport}`)
        }).pipe(Effect.provide(Layer.fresh(layer)))
      }).pipe(Effect.scoped))
  }

  it.live("remote servers come first: in the listing, and for a tool both servers offer", () =>
    Effect.gen(function*() {
      const { url } = yield* httpEverything({ MCP_SERVER_KIND: "http" })
      const layer = CliRuntime.layer({
        mcp: {
          stdio: [{ ...everythingServer, env: { MCP_SERVER_KIND: "stdio" } }],
          remote: [{ name: "remote", url, transport: "http" }]
        }
      })
      yield* Effect.gen(function*() {
        const rt = yield* Runtime
        const servers = (yield* rt.listTools).map((t) => t.server)
        const remote = servers.filter((s) => s === "remote").length
        assert.isAbove(remote, 0)
        assert.deepStrictEqual(servers, [
          ...Array.from({ length: remote }, () => "remote"),
          ...Array.from({ length: servers.length - remote }, () => everythingServer.name)
        ])
        assert.strictEqual(servers.length, 2 * remote)
        assert.strictEqual(yield* getEnv(rt, "MCP_SERVER_KIND"), "http")
      }).pipe(Effect.provide(Layer.fresh(layer)))
    }).pipe(Effect.scoped))

  it.live("remote servers that cannot be reached fail the start, each named", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const layer = CliRuntime.layer({
        mcp: {
          stdio: [everythingServer],
          remote: [
            { name: "gone", url: `http://127.0.0.1:${port}/mcp`, transport: "http" },
            { name: "gone-sse", url: `http://127.0.0.1:${port}/sse`, transport: "sse" }
          ]
        }
      })
      const error = yield* Effect.flip(Effect.scoped(Layer.build(Layer.fresh(layer))))
      assert.instanceOf(error, RuntimeStartError)
      assert.match(error.message, /^MCP servers failed to start: gone: [^;]+; gone-sse: [^;]+$/)
    }))
})
