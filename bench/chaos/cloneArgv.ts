/**
 * Part of group 7, secrets: a clone with a `Redacted` token against a git server that takes the
 * token and then never answers, so the clone hangs with the token in git's hands. Meanwhile every
 * process's `/proc/<pid>/cmdline` on this host (containers' processes included: they are the
 * host's too) is read, several times over: none may hold a piece (8 characters or more) of the
 * token, which any local user could read with `ps`. The agent's shell (the parent of `git clone`)
 * must not have the token's variable in its own environment either. On CliRuntime: the set-up runs
 * the same commands through every runtime, and the runtime images have no git to clone with.
 */
import { Effect, Fiber, type Layer, Option, Redacted, Stream } from "effect"
import { randomBytes } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import { CliRuntime, cloneOrInitRepo, Runtime } from "../../src/index.ts"
import { shellQuote } from "../../src/quoting/shellQuote.ts"
import { atLeast, atMost, type Row } from "./rows.ts"

const PIECE = 8
const SAMPLES = 20

/** 401 until a request carries credentials; then says so and never answers (git waits, token in hand). */
const HANGING_GIT_SERVER = `
const server = require("http").createServer((request, response) => {
  if (request.headers.authorization === undefined) {
    response.writeHead(401, { "www-authenticate": 'Basic realm="x"' }).end()
  } else console.log("authorized")
})
server.listen(0, "127.0.0.1", () => console.log("listening " + server.address().port))
`

/** Every process's argv on this host, as `ps` shows it to any user. */
const commandLines = (): Array<{ readonly pid: string; readonly argv: string }> =>
  readdirSync("/proc").filter((name) => /^\d+$/.test(name)).flatMap((pid) => {
    try {
      return [{ pid, argv: readFileSync(`/proc/${pid}/cmdline`, "latin1") }]
    } catch {
      return [] // exited meanwhile
    }
  })

/** The parent pid of `pid`, from `/proc/<pid>/stat` (the field after the parenthesised name). */
const parentOf = (pid: string): string | undefined => {
  try {
    return readFileSync(`/proc/${pid}/stat`, "latin1").replace(/^.*\) /s, "").split(" ")[1]
  } catch {
    return undefined
  }
}

interface Sampled {
  readonly clonesSeen: number
  readonly leaks: number
  readonly shellsWithVariable: number
}

const sampleDuringClone = (token: string, node: string) =>
  Effect.gen(function*() {
    const rt = yield* Runtime
    const pieces = Array.from({ length: token.length - PIECE + 1 }, (_, i) => token.slice(i, i + PIECE))
    const server = yield* rt.spawn(`exec ${shellQuote(node)} -e ${shellQuote(HANGING_GIT_SERVER)}`)
    const lines = server.output.pipe(
      Stream.map((chunk) => chunk.text),
      Stream.splitLines
    )
    const port = yield* lines.pipe(
      Stream.map((line) => /^listening (\d+)$/.exec(line)?.[1]),
      Stream.filter((found): found is string => found !== undefined),
      Stream.runHead,
      Effect.map(Option.getOrElse(() => "0"))
    )
    const dir = `hang${randomBytes(4).toString("hex")}`
    const clone = yield* Effect.forkChild(
      cloneOrInitRepo({ repository: `http://127.0.0.1:${port}/${dir}.git`, token: Redacted.make(token) })
    )
    // A clone that ends first (no git in the sandbox, a refused token) leaves nothing to sample: 0 clones seen.
    const authorized = yield* Effect.raceFirst(
      Effect.as(lines.pipe(Stream.filter((line) => line === "authorized"), Stream.runHead), true),
      Effect.as(Fiber.await(clone), false)
    )
    let clonesSeen = 0
    let leaks = 0
    const shells = new Set<string>()
    for (let i = 0; authorized && i < SAMPLES; i++) {
      for (const { pid, argv } of commandLines()) {
        if (pieces.some((piece) => argv.includes(piece))) leaks++
        // The session shell runs `git --no-pager clone ...` (its git wrapper adds the flag).
        if (/^git\0(--no-pager\0)?clone\0/.test(argv) && argv.includes(dir)) {
          clonesSeen++
          const shell = parentOf(pid)
          if (shell !== undefined) shells.add(shell)
        }
      }
      yield* Effect.sleep("20 millis")
    }
    let shellsWithVariable = 0
    for (const shell of shells) {
      const environ = readFileSync(`/proc/${shell}/environ`, "latin1").split("\0")
      if (environ.some((entry) => entry.startsWith("GIT_TOKEN=") || pieces.some((p) => entry.includes(p)))) {
        shellsWithVariable++
      }
    }
    yield* Fiber.interrupt(clone)
    return { clonesSeen, leaks, shellsWithVariable } satisfies Sampled
  }).pipe(Effect.scoped)

const rowsOf = (runtime: string, sampled: Sampled): ReadonlyArray<Row> => [
  atLeast(
    `secrets: ${runtime} host samples of a hanging token clone's git process (of ${SAMPLES})`,
    sampled.clonesSeen,
    "samples",
    1
  ),
  atMost(`secrets: ${runtime} host process command lines holding a clone-token piece`, sampled.leaks, "argvs", 0),
  atMost(
    `secrets: ${runtime} agent shells holding the clone token in their own environment`,
    sampled.shellsWithVariable,
    "shells",
    0
  )
]

const run = <E>(layer: Layer.Layer<Runtime, E>, node: string): Promise<Sampled> =>
  Effect.runPromise(sampleDuringClone(randomBytes(16).toString("hex"), node).pipe(Effect.provide(layer)))

export const cloneArgvRows = async (): Promise<ReadonlyArray<Row>> =>
  rowsOf("Cli", await run(CliRuntime.layer(), process.execPath))
