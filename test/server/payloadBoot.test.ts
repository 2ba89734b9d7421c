/**
 * What the payload's server loads before it listens, and the build plugins that keep the rest out
 * (scripts/lazyWs.ts, scripts/requireBuiltins.ts): `ws` and the built-ins only libraries reach
 * (`node:https`, `node:tls`, `node:readline`) are ~25 ms of a boot when evaluated there.
 * - The built payload's server, at its `listening` line, has loaded none of them.
 * - A bundle made with the plugins loads each on first use, and what it gets behaves as the real
 *   module: construction, statics, `instanceof`, subclassing, calls.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { rolldown } from "rolldown"
import { lazyWs } from "../../scripts/lazyWs.ts"
import { requireBuiltins } from "../../scripts/requireBuiltins.ts"
import { payloadDirectory } from "../../src/serverStart/payload.ts"
import { tempDir } from "./helpers.ts"

/** Node's record of the built-in modules it has loaded. */
const LOADED = `process.moduleLoadList.filter((m) => m.startsWith("NativeModule ")).map((m) => m.slice(13))`
const LAZY = ["https", "tls", "readline"]

describe("the payload's boot", () => {
  it.live("loads neither ws nor node:https, node:tls or node:readline before it listens", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("payload-boot-")
      const preload = join(dir, "loaded.cjs")
      // At the listening line, the built-ins loaded so far go to stderr.
      writeFileSync(
        preload,
        `const write = process.stdout.write.bind(process.stdout)
process.stdout.write = (chunk, ...rest) => {
  if (String(chunk).includes("listening")) process.stderr.write("loaded " + JSON.stringify(${LOADED}) + "\\n")
  return write(chunk, ...rest)
}`
      )
      const entry = join(yield* payloadDirectory, "server.mjs")
      const loaded = yield* Effect.callback<ReadonlyArray<string>, Error>((resume) => {
        const child = spawn(
          process.execPath,
          ["-r", preload, entry, "0", "--working-dir", dir, "--no-enable-browser"],
          {
            stdio: ["ignore", "ignore", "pipe"]
          }
        )
        let stderr = ""
        child.stderr.on("data", (chunk: Buffer) => {
          stderr += chunk.toString()
          const line = /^loaded (.*)$/m.exec(stderr)
          if (line !== null) {
            child.kill("SIGTERM")
            resume(Effect.succeed(JSON.parse(line[1]!) as Array<string>))
          }
        })
        child.on("exit", (code) => resume(Effect.fail(new Error(`the server exited (${code}): ${stderr}`))))
        return Effect.sync(() => child.kill("SIGKILL"))
      })
      // The server did load built-ins of its own (the check sees them at all).
      assert.includeMembers([...loaded], ["http", "net", "child_process"])
      for (const name of LAZY) assert.notInclude(loaded, name, `${name} was loaded at boot`)
    }).pipe(Effect.scoped), 30_000)
})

describe("the payload's lazy modules", () => {
  it.live("load on first use and behave as the real ones", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("payload-lazy-")
      mkdirSync(join(dir, "out"))
      const input = join(dir, "input.mjs")
      writeFileSync(
        input,
        `import * as WS from "ws"
import * as Tls from "node:tls"
import { createInterface } from "node:readline"
import { PassThrough } from "node:stream"
const loaded = () => ${LOADED}
const report = { before: loaded() }
const server = new WS.WebSocketServer({ noServer: true })
report.afterWs = loaded()
report.wsInstance = server instanceof WS.WebSocketServer
report.wsStatic = WS.WebSocket.OPEN
report.wsClients = server.clients.size
server.close()
class Socket extends Tls.TLSSocket {}
report.subclass = Object.getPrototypeOf(Socket.prototype) === process.getBuiltinModule("node:tls").TLSSocket.prototype
report.tlsCall = typeof Tls.createSecureContext({}).context
const lines = createInterface({ input: new PassThrough() })
report.readline = typeof lines.close
lines.close()
report.after = loaded()
console.log(JSON.stringify(report))
`
      )
      const bundle = yield* Effect.promise(() =>
        rolldown({
          input,
          platform: "node",
          plugins: [lazyWs(), requireBuiltins()],
          logLevel: "silent",
          cwd: process.cwd()
        })
      )
      yield* Effect.promise(() => bundle.write({ dir: join(dir, "out"), format: "esm", entryFileNames: "out.mjs" }))
      yield* Effect.promise(() => bundle.close())
      const output = yield* Effect.callback<string, Error>((resume) => {
        const child = spawn(process.execPath, [join(dir, "out", "out.mjs")], { stdio: ["ignore", "pipe", "pipe"] })
        let stdout = ""
        let stderr = ""
        child.stdout.on("data", (chunk: Buffer) => stdout += chunk.toString())
        child.stderr.on("data", (chunk: Buffer) => stderr += chunk.toString())
        child.on("exit", (code) =>
          resume(code === 0 ? Effect.succeed(stdout) : Effect.fail(new Error(`exit ${code}: ${stderr}`))))
      })
      const report = JSON.parse(output) as Record<string, unknown>
      for (const name of LAZY) {
        assert.notInclude(report["before"] as Array<string>, name)
      }
      assert.include(report["afterWs"] as Array<string>, "https", "ws evaluated on its first construction")
      assert.notInclude(report["afterWs"] as Array<string>, "readline")
      assert.include(report["after"] as Array<string>, "readline")
      assert.deepStrictEqual(
        { ...report, before: undefined, afterWs: undefined, after: undefined },
        {
          before: undefined,
          afterWs: undefined,
          after: undefined,
          wsInstance: true,
          wsStatic: 1,
          wsClients: 0,
          subclass: true,
          tlsCall: "object",
          readline: "function"
        }
      )
    }).pipe(Effect.scoped), 60_000)
})
