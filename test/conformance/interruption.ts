/**
 * "Interrupting `run` stops what it started", for every action type that can
 * hang, as one table run against a runtime (in process and over HTTP). Each
 * case starts an action on something that never ends, waits until it is
 * engaged, interrupts the fiber, then checks that what the action started is
 * gone and that the session still answers an action of the same type.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Fiber, type Layer } from "effect"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  BrowserOutputObservation,
  CmdRunAction,
  IPythonRunCellAction,
  IPythonRunCellObservation,
  McpObservation,
  type Observation,
  Runtime,
  type RuntimeShape
} from "../../src/index.ts"
import { eventually } from "../eventually.ts"
import { chromiumAvailable } from "./chromium.ts"
import { awaitProcessCount, uniqueSeconds } from "./helpers.ts"
import { kernelAvailable } from "./kernel.ts"
/**
 * A site on 127.0.0.1 whose `/hang` accepts the request and never answers, and
 * whose other paths answer a small page. It counts the connections that carried
 * a `/hang` request and are still open.
 */
export interface HangingSite {
  readonly base: string
  readonly hanging: () => number
  readonly requested: () => number
}

export const hangingSite = Effect.acquireRelease(
  Effect.promise(() =>
    new Promise<{ server: Server; site: HangingSite }>((resolve) => {
      const open = new Set<Socket>()
      let requested = 0
      const server = createServer((req, res) => {
        if (req.url !== "/hang") return void res.writeHead(200, { "content-type": "text/html" }).end("<h1>Good</h1>")
        requested++
        open.add(req.socket)
        req.socket.once("close", () => open.delete(req.socket))
      })
      server.listen(0, "127.0.0.1", () =>
        resolve({
          server,
          site: {
            base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
            hanging: () => open.size,
            requested: () => requested
          }
        }))
    })
  ),
  ({ server }) => Effect.sync(() => server.closeAllConnections() ?? server.close())
).pipe(Effect.map(({ site }) => site))

/** A directory the slow MCP server records its calls in (see fixtures/slowMcpServer.ts). */
export const mcpRecords = mkdtempSync(join(tmpdir(), "slow-mcp-"))
process.once("exit", () => rmSync(mcpRecords, { recursive: true, force: true }))

/** The slow MCP server over stdio, as a runtime's MCP server configuration. */
export const slowMcpServer = {
  name: "slow",
  command: process.execPath,
  args: [join(import.meta.dirname, "fixtures", "slowMcpServer.ts")],
  env: { SLOW_MCP_RECORDS: mcpRecords }
}

/** Whether the slow server recorded `what` (`started`, `cancelled`, `finished`) for the call tagged `tag`. */
export const recorded = (tag: string, what: string) => existsSync(join(mcpRecords, `${tag}.${what}`))

export interface InterruptionCase {
  readonly action: string
  /** Which runtime tool the case needs (it is skipped without it). */
  readonly needs: "shell" | "ipython" | "browser" | "mcp"
  /** Start the hanging action (forked), wait until it is engaged, interrupt it, check it is gone and the session answers. */
  readonly check: (rt: RuntimeShape, site: HangingSite) => Effect.Effect<void>
}

/** Forks `action`, waits until `engaged` holds, then interrupts it (the interruption returns once it is done). */
const interruptWhenEngaged = <A, E>(action: Effect.Effect<A, E>, engaged: Effect.Effect<void>) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.forkChild(action)
    yield* engaged
    yield* Fiber.interrupt(fiber)
  })

const cell = (rt: RuntimeShape, code: string) =>
  rt.runIPython(new IPythonRunCellAction({ code, includeExtra: false })).pipe(Effect.orDie)

const isBrowserOutput = (obs: Observation) => {
  assert.instanceOf(obs, BrowserOutputObservation, obs.content)
  return obs as BrowserOutputObservation
}

/** A hanging navigation's connection is closed within a second, and the next page loads. */
const browserCase = (action: string, start: (rt: RuntimeShape, url: string) => Effect.Effect<unknown, unknown>) => ({
  action,
  needs: "browser" as const,
  check: (rt: RuntimeShape, site: HangingSite) =>
    Effect.gen(function*() {
      yield* rt.browse(`${site.base}/good`).pipe(Effect.orDie) // Chromium is up
      const before = site.requested()
      yield* interruptWhenEngaged(
        start(rt, `${site.base}/hang`),
        eventually("the browser requested /hang", () => site.requested() > before)
      )
      yield* eventually("the hanging connection is closed", () => site.hanging() === 0, 1_000)
      const good = isBrowserOutput(yield* rt.browse(`${site.base}/good`).pipe(Effect.orDie))
      assert.strictEqual(good.error, false, good.content)
      assert.include(good.content, "Good")
    })
})

export const interruptionCases: ReadonlyArray<InterruptionCase> = [
  {
    action: "run",
    needs: "shell",
    check: (rt) =>
      Effect.gen(function*() {
        const seconds = uniqueSeconds()
        yield* interruptWhenEngaged(
          rt.runCommand(new CmdRunAction({ command: `sleep ${seconds}`, blocking: true })),
          awaitProcessCount(`sleep ${seconds}`, 1)
        )
        yield* awaitProcessCount(`sleep ${seconds}`, 0)
        assert.strictEqual((yield* rt.runCommand("echo still here").pipe(Effect.orDie)).content, "still here")
      })
  },
  {
    action: "run_ipython",
    needs: "ipython",
    check: (rt) =>
      Effect.gen(function*() {
        const dir = mkdtempSync(join(tmpdir(), "interrupted-cell-"))
        const [started, after] = [join(dir, "started"), join(dir, "after-sleep")]
        yield* cell(rt, "0") // the kernel is up
        yield* interruptWhenEngaged(
          cell(
            rt,
            `import time\nopen(${JSON.stringify(started)}, "w").close()\ntime.sleep(60)\nopen(${
              JSON.stringify(after)
            }, "w").close()`
          ),
          eventually("the cell started", () => existsSync(started)).pipe(Effect.andThen(Effect.sleep("300 millis")))
        )
        const begun = Date.now()
        const next = yield* cell(rt, "print(1)")
        assert.isBelow(Date.now() - begun, 2_000, "the next cell waited for the interrupted one")
        assert.instanceOf(next, IPythonRunCellObservation)
        assert.strictEqual(next.content, "1")
        yield* Effect.sleep("200 millis")
        assert.isFalse(existsSync(after), "the interrupted cell ran on")
        rmSync(dir, { recursive: true, force: true })
      })
  },
  browserCase("browse", (rt, url) => rt.browse(url)),
  browserCase("browse_interactive", (rt, url) => rt.browseInteractive(`goto(${JSON.stringify(url)})`)),
  {
    action: "call_tool_mcp",
    needs: "mcp",
    check: (rt) =>
      Effect.gen(function*() {
        const tag = `call-${uniqueSeconds()}`
        yield* interruptWhenEngaged(
          rt.callTool({ name: "sleep", arguments: { seconds: 30, tag } }),
          eventually("the tool call started", () => recorded(tag, "started"))
        )
        yield* eventually("the MCP server saw the call cancelled", () => recorded(tag, "cancelled"), 1_000)
        assert.isFalse(recorded(tag, "finished"))
        const echo = yield* rt.callTool({ name: "echo", arguments: { text: "still here" } }).pipe(Effect.orDie)
        assert.instanceOf(echo, McpObservation, echo.content)
        assert.deepStrictEqual(JSON.parse(echo.content), { content: [{ type: "text", text: "still here" }] })
      })
  }
]

/** The tools this machine can run (the shell and the MCP fixture always). */
export interface Tools {
  readonly ipython: boolean
  readonly browser: boolean
}

/**
 * Runs every case against one runtime (with the slow MCP server, and IPython and
 * the browser where the machine has them); a case whose tool is missing is skipped.
 */
export const describeInterruption = (
  title: string,
  runtime: (tools: Tools) => Layer.Layer<Runtime, unknown>
) => {
  const tools = { ipython: kernelAvailable(), browser: chromiumAvailable() }
  const have = { ...tools, shell: true, mcp: true }
  describe(title, () => {
    layer(runtime(tools), { excludeTestServices: true, timeout: 60_000 })((it) => {
      for (const c of interruptionCases) {
        it.effect.skipIf(!have[c.needs])(
          `${c.action}: stops what it started, and the session still answers`,
          () =>
            Effect.gen(function*() {
              yield* c.check(yield* Runtime, yield* hangingSite)
            }).pipe(Effect.scoped),
          { timeout: 30_000 }
        )
      }
    })
  })
}
