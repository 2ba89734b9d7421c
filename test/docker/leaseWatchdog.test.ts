/**
 * The leases' watchdog (src/providers/docker/leaseWatchdog.ts): one process per owner, whichever
 * number of DockerRuntime layers it runs at once or one after another; told of each lease taken
 * and released; at its owner's end it expires what it still watches, and exits once that is swept
 * (or at once when nothing was left).
 */
import { assert, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DockerRuntime } from "../../src/docker.ts"
import { Runtime } from "../../src/index.ts"
import { LEASE_DIR_PREFIX } from "../../src/providers/docker/leaseDir.ts"
import { LEASE_FILE } from "../../src/server/leaseFile.ts"
import { eventually } from "../eventually.ts"
import { baseImage, describeDocker } from "./infra.ts"

const MAIN = join(import.meta.dirname, "..", "..", "src", "providers", "docker", "leaseWatchdogMain.ts")
const NODE = join(import.meta.dirname, "..", "..", "node_modules", ".bin", "node")

/** This process's children running a watchdog. */
const watchdogs = (): Array<string> =>
  spawnSync("pgrep", ["-P", String(process.pid), "-f", "leaseWatchdogMain"], { encoding: "utf8" }).stdout.trim()
    .split("\n").filter((pid) => pid !== "")

/** A lease directory as an owner writes it (renewed every 100 ms), just renewed. */
const leaseDir = (staleAfterMs: number) => {
  const dir = mkdtempSync(join(tmpdir(), LEASE_DIR_PREFIX))
  writeFileSync(join(dir, LEASE_FILE), JSON.stringify({ renewEveryMs: 100, staleAfterMs }))
  return dir
}

/** A watchdog of our own, told `lines`, its stdin then closed as an owner's end closes it. */
const watchdogTold = (lines: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn(NODE, [MAIN], { stdio: ["pipe", "ignore", "ignore"] })
      for (const line of lines) child.stdin.write(`${line}\n`)
      child.stdin.end()
      return child
    }),
    (child) => Effect.sync(() => child.exitCode === null && child.kill("SIGKILL"))
  )

/** A command answered by the runtime `built` holds. */
const answer = (built: Context.Context<Runtime>) => Context.get(built, Runtime).runCommand("true")

describeDocker("the leases' watchdog", () => {
  const image = baseImage()
  const layer = () => DockerRuntime.layer({ baseImage: image })

  it.live("is one process for an owner's layers, at once and one after another", () =>
    Effect.gen(function*() {
      const before = new Set(watchdogs())
      const ours = () => watchdogs().filter((pid) => !before.has(pid))
      const first = yield* Effect.scoped(Effect.gen(function*() {
        const built = yield* Effect.all([Layer.build(layer()), Layer.build(layer())], { concurrency: 2 })
        yield* Effect.forEach(built, answer, { discard: true })
        assert.strictEqual(ours().length, 1, "two layers at once, one watchdog")
        return ours()[0]
      }))
      // Released, it stays a while for the next layer.
      yield* Effect.scoped(Effect.flatMap(Layer.build(layer()), answer))
      assert.deepStrictEqual(ours(), [first], "one layer after another, the same watchdog")
    }), 180_000)

  it.live(
    "at its owner's end, exits at once when every lease was released, leaving them alone",
    () =>
      Effect.gen(function*() {
        const dir = leaseDir(60_000)
        const child = yield* watchdogTold([`+${dir}`, `-${dir}`])
        yield* eventually("the watchdog exited", () => child.exitCode !== null, 10_000, 50)
        assert.notStrictEqual(statSync(join(dir, LEASE_FILE)).mtimeMs, 0, "a released lease expired")
        rmSync(dir, { recursive: true, force: true })
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "at its owner's end, expires the leases it still watches, and exits once a reaper pass swept them",
    () =>
      Effect.gen(function*() {
        // The released one stays fresh for a minute: no reaper pass may take it as stale meanwhile.
        const [kept, released] = [leaseDir(1_000), leaseDir(60_000)]
        const child = yield* watchdogTold([`+${kept}`, `+${released}`, `-${released}`])
        // Its own pass: the lease expired (stale at once), confirmed, and swept as no container names it.
        yield* eventually("the lease it watched was swept", () => !existsSync(kept), 20_000, 50)
        yield* eventually("the watchdog exited", () => child.exitCode !== null, 5_000, 50)
        assert.isTrue(existsSync(join(released, LEASE_FILE)), "the released lease is not its to expire")
        rmSync(released, { recursive: true, force: true })
      }).pipe(Effect.scoped),
    60_000
  )
})
