/**
 * Group 6, interruption: each action type is started on its own LocalRuntime (the
 * client, the HTTP server and the tool in between, as in production) and
 * interrupted once under way. What it started must be gone and the next action
 * must answer promptly.
 */
import { type Effect, ManagedRuntime, Stream } from "effect"
import { execFileSync } from "node:child_process"
import { existsSync, rmSync } from "node:fs"
import { createServer, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CmdRunAction, Runtime, type RuntimeShape } from "../../src/index.ts"
import { LocalRuntime, type LocalRuntimeOptions } from "../../src/local.ts"
import { type GroupContext, type Row, sleep, waitFor, within } from "./rows.ts"

/** The MCP tool's sleep (a number no other process on the machine uses). */
const HANGING_SLEEP = "987002"

/** How long an action may take to get under way (Chromium's first launch). */
const BEGIN_MS = 15_000

/** How long after the interruption the next action may take. */
const NEXT_MS = 5_000

const running = (fragment: string) => () => {
  try {
    return execFileSync("pgrep", ["-f", fragment], { encoding: "utf8" }).trim() !== ""
  } catch {
    return false
  }
}

/**
 * A TCP server that accepts and never answers; counts the connections still open that carried
 * a request. (Chromium may also preconnect a spare socket that never sends anything: that one
 * sits in its idle pool, is no work of the interrupted action, and is not counted.)
 */
const hangingServer = async () => {
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    socket.once("data", () => sockets.add(socket))
    socket.on("close", () => sockets.delete(socket))
    socket.on("error", () => undefined)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  return {
    url: `http://127.0.0.1:${port}/never`,
    open: () => sockets.size,
    close: () => {
      for (const s of sockets) s.destroy()
      server.close()
    }
  }
}

interface Case {
  readonly name: string
  readonly tools: LocalRuntimeOptions
  readonly start: (rt: RuntimeShape) => Effect.Effect<unknown, unknown>
  /** True once the action has really begun (the sleep runs, the page connected); else a fixed wait. */
  readonly begun?: () => boolean
  /** True once what the action started is gone. */
  readonly gone: () => boolean
  readonly next: (rt: RuntimeShape) => Effect.Effect<unknown, unknown>
  readonly answered: (observation: unknown) => boolean
}

const content = (o: unknown) => String((o as { content?: unknown }).content ?? "")
const echoNext = (rt: RuntimeShape) => rt.runCommand("echo next-$((20+22))")
const echoed = (o: unknown) => content(o).includes("next-42")

/** A FIFO in the runtime's workspace: opening it blocks until someone opens the other end. */
const fifo = (rt: RuntimeShape) => `${rt.info.workspace}/chaos.fifo`

/** The server a case needs: only its own tool, so one stuck tool cannot spoil the next case. */
const layerFor = (tools: LocalRuntimeOptions) => LocalRuntime.layer(tools)

export const interruptRows = async ({ budget }: GroupContext): Promise<ReadonlyArray<Row>> => {
  const hanging = await hangingServer()
  const cellStarted = join(tmpdir(), `chaos-cell-started-${process.pid}`)
  const cases: ReadonlyArray<Case> = [
    {
      name: "run",
      tools: {},
      start: (r) => r.runCommand("sleep 987001"),
      begun: running("sleep 987001"),
      gone: () => !running("sleep 987001")(),
      next: echoNext,
      answered: echoed
    },
    {
      // Typed in, as bash waits for the here-document's lines (src/executor/shell/incomplete.ts).
      name: "run waiting for more lines",
      tools: {},
      start: (r) => r.runCommand(new CmdRunAction({ command: "cat << CHAOS_987004", blocking: true })),
      gone: () => true,
      next: echoNext,
      answered: echoed
    },
    {
      name: "runStream",
      tools: {},
      start: (r) => Stream.runDrain(r.runStream(new CmdRunAction({ command: "sleep 987003" }))),
      begun: running("sleep 987003"),
      gone: () => !running("sleep 987003")(),
      next: echoNext,
      answered: echoed
    },
    {
      name: "ipython",
      tools: { ipython: { agentSkills: false } },
      // The cell says when it runs (the kernel starts on the first cell, which takes a while).
      start: (r) => r.runIPython(`import time\nopen(${JSON.stringify(cellStarted)}, "w").close()\ntime.sleep(987)`),
      begun: () => existsSync(cellStarted),
      gone: () => true,
      next: (r) => r.runIPython("print(20 + 22)"),
      answered: (o) => content(o).includes("42")
    },
    {
      name: "browse",
      tools: { browser: true },
      start: (r) => r.browse(hanging.url),
      begun: () => hanging.open() > 0,
      gone: () => hanging.open() === 0,
      next: echoNext,
      answered: echoed
    },
    {
      name: "mcp call",
      tools: {
        mcp: {
          stdio: [{
            name: "chaos",
            command: process.execPath,
            args: [join(import.meta.dirname, "hangingMcp.ts"), HANGING_SLEEP],
            env: {}
          }]
        }
      },
      start: (r) => r.callTool({ name: "hang" }),
      begun: running(`sleep ${HANGING_SLEEP}`),
      gone: () => !running(`sleep ${HANGING_SLEEP}`)(),
      next: echoNext,
      answered: echoed
    },
    {
      name: "file read (FIFO)",
      tools: {},
      start: (r) => r.read(fifo(r)),
      gone: () => true,
      next: echoNext,
      answered: echoed
    },
    {
      name: "file write (FIFO)",
      tools: {},
      start: (r) => r.write({ path: fifo(r), content: "x" }),
      gone: () => true,
      next: echoNext,
      answered: echoed
    }
  ]
  const rows: Array<Row> = []
  try {
    for (const c of cases) {
      const name = `interrupt: ${c.name}: next action answers, started work gone`
      if (budget.left() < 3 * NEXT_MS) {
        rows.push({ name, value: 0, unit: "ms", target: "not run: budget", pass: false })
        continue
      }
      const runtime = ManagedRuntime.make(layerFor(c.tools))
      try {
        const rt = await runtime.runPromise(Runtime)
        await runtime.runPromise(rt.runCommand(`mkfifo ${fifo(rt)}`))
        const abort = new AbortController()
        const started = runtime.runPromise(c.start(rt), { signal: abort.signal }).catch(() => undefined)
        await sleep(1_000)
        // Interrupt what is under way: a browser launch or an MCP start must not be what gets interrupted.
        const begun = c.begun === undefined ? true : (await waitFor(c.begun, BEGIN_MS, 50)) !== null
        abort.abort()
        const interruptedAt = performance.now()
        await within(started, NEXT_MS, `${c.name} interruption`).catch(() => undefined)
        const next = await within(runtime.runPromise(c.next(rt)), NEXT_MS, c.name).catch((e: Error) => e)
        const answeredMs = performance.now() - interruptedAt
        const gone = (await waitFor(c.gone, NEXT_MS, 100)) !== null
        const ok = begun && !(next instanceof Error) && c.answered(next) && gone
        if (!ok) {
          const answer = next instanceof Error ? next.message : content(next).slice(0, 200)
          console.log(`  ${c.name}: begun ${begun}; next ${answer}; gone ${gone}`)
        }
        rows.push({
          name,
          value: Math.round(answeredMs),
          unit: "ms",
          target: `<= ${NEXT_MS}, gone`,
          pass: ok && answeredMs <= NEXT_MS
        })
      } finally {
        await runtime.dispose()
      }
    }
  } finally {
    hanging.close()
    rmSync(cellStarted, { force: true })
  }
  return rows
}
