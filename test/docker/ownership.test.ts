/**
 * Ownership by lease: owners in separate PID namespaces sharing the engine never
 * reap each other's live containers; a SIGKILLed owner's container stops itself
 * with no other runtime started, and the next reaper pass removes it with its
 * workspace and lease; kept-alive containers and containers whose lease cannot
 * be read are never reaped.
 */
import { afterAll, assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DockerEngine } from "../../src/layers/docker/engine.ts"
import { LABEL } from "../../src/layers/docker/labels.ts"
import { LEASE_DIR_PREFIX } from "../../src/layers/docker/ownerLease.ts"
import { reapOrphans } from "../../src/layers/docker/reaper.ts"
import { LEASE_FILE } from "../../src/server/ownerLease.ts"
import { eventually } from "../eventually.ts"
import { containerName, dockerCli, inspect, removeLeftovers, sessionContainers, sessionId } from "./helpers.ts"
import { baseImage, describeDocker } from "./infra.ts"

const NODE = join(import.meta.dirname, "..", "..", "node_modules", ".bin", "node")

/** Lease terms that make a test take seconds: renew 200 ms, stale after 1.5 s, reap every 300 ms. */
const FAST = { renewEvery: 200, staleAfter: 1_500, reapEvery: 300 }

const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null

/**
 * An owner process (fixtures/owner.ts) in a PID namespace of its own, where it is
 * pid 1: `unshare --kill-child` takes it down when unshare is SIGKILLed. Resolves
 * once the owner's runtime answered; `kill` SIGKILLs it (no finalizer runs).
 */
const owner = (image: string, session: string, options: object, ownPidNamespace = true) =>
  Effect.acquireRelease(
    Effect.callback<ChildProcess, Error>((resume) => {
      const command = [NODE, join(import.meta.dirname, "fixtures", "owner.ts"), image, session, JSON.stringify(options)]
      const unshare = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child=SIGKILL"]
      const [file, ...args] = ownPidNamespace ? [...unshare, ...command] : command
      const child = spawn(file!, args, { stdio: ["ignore", "pipe", "pipe"] })
      let output = ""
      const onData = (chunk: Buffer) => {
        output += chunk.toString()
        if (output.includes(`READY ${session}`)) resume(Effect.succeed(child))
      }
      child.stdout!.on("data", onData)
      child.stderr!.on("data", onData)
      child.on("exit", (code) => resume(Effect.fail(new Error(`owner exited (${code}) before READY:\n${output}`))))
    }).pipe(Effect.timeout("120 seconds")),
    (child) => Effect.sync(() => exited(child) || child.kill("SIGKILL"))
  )

const kill = (child: ChildProcess) =>
  Effect.callback<void>((resume) => {
    if (exited(child)) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
    child.kill("SIGKILL")
  })

const running = (id: string) => dockerCli("inspect", "-f", "{{.State.Running}}", id).stdout.trim() === "true"

const hostWorkspace = (id: string) =>
  inspect(id).pipe(Effect.map((info) => info!.Mounts.find((m) => m.Destination === "/workspace")!.Source))

const reap = reapOrphans().pipe(Effect.provide(DockerEngine.layer))

/** A lease directory as an owner writes it, last renewed `ageMs` ago. */
const leaseDir = (ageMs: number) => {
  const dir = mkdtempSync(join(tmpdir(), LEASE_DIR_PREFIX))
  const file = join(dir, LEASE_FILE)
  writeFileSync(file, JSON.stringify({ renewEveryMs: 100, staleAfterMs: 1_000 }))
  const at = new Date(Date.now() - ageMs)
  utimesSync(file, at, at)
  return dir
}

/** A bare container (`sleep`) carrying our labels, as if a DockerRuntime had made it. */
const labelledContainer = (image: string, session: string, labels: Record<string, string>) => {
  const flags = Object.entries({ [LABEL.managed]: "true", [LABEL.session]: session, ...labels }).flatMap((
    [k, v]
  ) => ["--label", `${k}=${v}`])
  const run = dockerCli("run", "-d", "--name", containerName(session), ...flags, "--entrypoint", "sleep", image, "600")
  assert.strictEqual(run.status, 0, run.stderr)
  return run.stdout.trim().slice(0, 12)
}

describeDocker("Docker ownership by lease", () => {
  const image = baseImage()
  afterAll(() => removeLeftovers("own"))

  it.live(
    "owners in separate PID namespaces (both pid 1) never reap each other's live containers",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const sessions = [sessionId("own"), sessionId("own")] as const
        // One after the other: each owner process rebuilds the server payload when it starts from source.
        const owners = yield* Effect.forEach(sessions, (s) => owner(image, s, { ownerLease: FAST }))
        const ids = sessions.map((s) => sessionContainers(s)[0]!)
        for (const [i, id] of ids.entries()) {
          const info = yield* inspect(id)
          assert.isNotNull(info, `the live container of ${sessions[i]} was reaped by the other owner`)
          // The worst case for pid-based ownership: the same pid, each in its own namespace.
          assert.strictEqual(info!.Config.Labels[LABEL.ownerPid], "1")
        }
        // Each owner's reaper runs every 300 ms: some 20 passes each, and leases stale after 1.5 s.
        yield* Effect.sleep("6 seconds")
        for (const [i, s] of sessions.entries()) {
          assert.deepStrictEqual(sessionContainers(s), [ids[i]], `the container of ${s} was reaped`)
          assert.isTrue(running(ids[i]!), `the container of ${s} stopped`)
        }
        // Once both owners die, both orphans stop themselves.
        yield* Effect.forEach(owners, kill, { discard: true })
        yield* eventually("every container stopped", () => ids.every((id) => !running(id)), 10_000, 250)
        yield* reap
        for (const s of sessions) assert.deepStrictEqual(sessionContainers(s), [])
      })),
    180_000
  )

  it.live(
    "a SIGKILLed owner's container stops itself within 60 s with no other runtime, and the next reaper pass removes it with its workspace",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const session = sessionId("own")
        // Default terms: renewed every 2 s, stale after 20 s.
        const child = yield* owner(image, session, {})
        const [id] = sessionContainers(session)
        const labels = (yield* inspect(id!))!.Config.Labels
        const workspace = yield* hostWorkspace(id!)
        const lease = labels[LABEL.ownerLease]!
        assert.isTrue(existsSync(workspace) && existsSync(join(lease, LEASE_FILE)))
        const killedAt = Date.now()
        yield* kill(child)
        yield* eventually("the orphan stopped", () => !running(id!), 60_000, 250)
        const stoppedIn = Date.now() - killedAt
        console.log(`owner SIGKILLed: its container stopped itself in ${(stoppedIn / 1000).toFixed(1)} s`)
        assert.isAtMost(stoppedIn, 60_000)
        assert.strictEqual(yield* reap, 1)
        console.log(
          `... and was removed by the next reaper pass ${((Date.now() - killedAt) / 1000).toFixed(1)} s after`
        )
        assert.deepStrictEqual(sessionContainers(session), [])
        assert.isFalse(existsSync(workspace), "the temporary workspace remains")
        assert.isFalse(existsSync(lease), "the stale lease remains")
      })),
    180_000
  )

  it.live(
    "a SIGKILLed owner's lease watchdog removes its container, workspace and lease, with no reaper run here",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const session = sessionId("own")
        // In our PID namespace, so its watchdog (a session of its own) outlives it. Terms slower
        // than FAST: an owner starting its container while other test files load the machine can
        // stall past 1.5 s, and a lease swept meanwhile would send its watchdog away.
        const child = yield* owner(image, session, { ownerLease: { renewEvery: 500, staleAfter: 5_000 } }, false)
        const [id] = sessionContainers(session)
        const workspace = yield* hostWorkspace(id!)
        const lease = (yield* inspect(id!))!.Config.Labels[LABEL.ownerLease]!
        const killedAt = Date.now()
        yield* kill(child)
        yield* eventually("the orphan was removed", () => sessionContainers(session).length === 0, 60_000, 250)
        console.log(`owner SIGKILLed: its watchdog removed the container in ${Date.now() - killedAt} ms`)
        assert.isFalse(existsSync(workspace), "the temporary workspace remains")
        yield* eventually("the stale lease was removed", () => !existsSync(lease), 5_000, 250)
      })),
    120_000
  )

  it.live(
    "a kept-alive container survives its SIGKILLed owner and every reaper pass",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const session = sessionId("own")
        const child = yield* owner(image, session, { ownerLease: FAST, keepRuntimeAlive: true })
        const [id] = sessionContainers(session)
        assert.isUndefined((yield* inspect(id!))!.Config.Labels[LABEL.ownerLease])
        yield* kill(child)
        for (let pass = 0; pass < 4; pass++) {
          yield* Effect.sleep("1 second")
          assert.strictEqual(yield* reap, 0)
        }
        assert.isTrue(running(id!))
        dockerCli("rm", "-f", "-v", id!)
      })),
    180_000
  )

  it.live("the reaper removes a container only on a lease it reads as stale", () =>
    Effect.gen(function*() {
      const unreadable = sessionId("own")
      const fresh = sessionId("own")
      const stale = sessionId("own")
      const freshLease = leaseDir(0)
      const staleLease = leaseDir(60_000)
      labelledContainer(image, unreadable, { [LABEL.ownerLease]: join(tmpdir(), `${LEASE_DIR_PREFIX}missing`) })
      const freshId = labelledContainer(image, fresh, { [LABEL.ownerLease]: freshLease })
      labelledContainer(image, stale, { [LABEL.ownerLease]: staleLease })
      utimesSync(join(freshLease, LEASE_FILE), new Date(), new Date())
      assert.strictEqual(yield* reap, 1)
      assert.lengthOf(sessionContainers(unreadable), 1, "a container without a readable lease was reaped")
      assert.deepStrictEqual(sessionContainers(fresh), [freshId])
      assert.deepStrictEqual(sessionContainers(stale), [])
      assert.isFalse(existsSync(staleLease), "a stale lease no container names is swept")
      assert.isTrue(existsSync(freshLease))
      dockerCli("rm", "-f", "-v", containerName(unreadable), freshId)
      rmSync(freshLease, { recursive: true, force: true })
    }), 60_000)
})
