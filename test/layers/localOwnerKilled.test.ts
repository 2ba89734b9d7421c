/**
 * A LocalRuntime whose owner is killed with SIGKILL (no finalizer runs): its
 * server stops (its stdin closes) and takes the temporary workspace and state
 * directory with it.
 */
import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn, spawnSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"

/** Start the owner fixture; resolves with it and its workspace once it printed READY. */
const startOwner = Effect.acquireRelease(
  Effect.callback<{ readonly pid: number; readonly workspace: string }, Error>((resume) => {
    const owner = spawn(process.execPath, [join(import.meta.dirname, "fixtures", "localOwner.ts")], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const workspace = /READY (\S+)/.exec(output)?.[1]
      if (workspace !== undefined) resume(Effect.succeed({ pid: owner.pid!, workspace }))
    }
    owner.stdout.on("data", onData)
    owner.stderr.on("data", onData)
    owner.on("exit", (code) => resume(Effect.fail(new Error(`owner exited (${code}) before READY:\n${output}`))))
  }).pipe(Effect.timeout("60 seconds")),
  ({ pid }) => Effect.sync(() => spawnSync("kill", ["-KILL", String(pid)]))
)

/** The pid of the action server serving `workspace`. */
const serverOf = (workspace: string) =>
  Number(spawnSync("pgrep", ["-f", "--", `--working-dir ${workspace} `], { encoding: "utf8" }).stdout.trim())

/** A variable of a running process's environment. */
const environOf = (pid: number, name: string) =>
  readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").find((e) => e.startsWith(`${name}=`))?.slice(name.length + 1)

const within = (ms: number, check: () => boolean) =>
  Effect.gen(function*() {
    const start = Date.now()
    while (!check()) {
      if (Date.now() - start > ms) return false
      yield* Effect.sleep("50 millis")
    }
    return true
  })

it.live(
  "a SIGKILLed owner's server stops and removes its temporary workspace and state directory",
  () =>
    Effect.scoped(Effect.gen(function*() {
      const { pid, workspace } = yield* startOwner
      const server = serverOf(workspace)
      assert.isAbove(server, 0, "the owner's server runs")
      const stateDir = environOf(server, "EFFECT_SANDBOX_STATE_DIR")!
      assert.isTrue(existsSync(workspace) && existsSync(stateDir))
      const killedAt = Date.now()
      process.kill(pid, "SIGKILL")
      assert.isTrue(yield* within(5_000, () => !existsSync(`/proc/${server}`)), "the server stops")
      assert.isTrue(yield* within(5_000, () => !existsSync(workspace) && !existsSync(stateDir)), "the dirs go")
      console.log(`owner SIGKILLed: server, workspace and state dir gone in ${Date.now() - killedAt} ms`)
    })),
  30_000
)
