/**
 * Ownership by lease: owners in separate PID namespaces sharing the engine never
 * reap each other's live containers; a SIGKILLed owner's container stops itself
 * with no other runtime started, and the next reaper pass removes it with its
 * workspace and lease; kept-alive containers, containers whose lease cannot
 * be read and containers the lease does not record (whatever their labels say)
 * are never reaped, nor is the workspace they name removed.
 */
import { afterAll, assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { LABEL } from "../../src/engines/docker/labels.ts"
import { LEASE_DIR_PREFIX } from "../../src/providers/docker/leaseDir.ts"
import { recordContainer } from "../../src/providers/docker/leaseRecords.ts"
import { LEASE_FILE } from "../../src/server/leaseFile.ts"
import { eventually } from "../eventually.ts"
import { containerName, dockerCli, inspect, removeLeftovers, sessionContainers, sessionId } from "./helpers.ts"
import { baseImage, describeDocker } from "./infra.ts"
import { hostWorkspace, kill, owner, reap, running } from "./owners.ts"

/** Lease terms that make a test take seconds: renew 200 ms, stale after 1.5 s, reap every 300 ms. */
const FAST = { renewEvery: 200, staleAfter: 1_500, reapEvery: 300 }

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
    "a SIGKILLed owner's one lease watchdog sees the owner's end and removes both its runtimes' containers, workspaces and leases long before the leases go stale, with no reaper run here",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const [first, second] = [sessionId("own"), sessionId("own")]
        // In our PID namespace, so its watchdog (a session of its own) outlives it. The leases go
        // stale only after 60 s: what removes the orphans sooner is the watchdog seeing its pipe
        // from the owner close (leaseWatchdog.ts), then a reaper pass confirming over two renewals.
        const child = yield* owner(image, first, { ownerLease: { renewEvery: 500, staleAfter: 60_000 }, second }, false)
        // Two layers, one watchdog: the owner's only child running leaseWatchdogMain.
        const watchdogs = spawnSync("pgrep", ["-P", String(child.pid), "-f", "leaseWatchdogMain"], { encoding: "utf8" })
        assert.strictEqual(watchdogs.stdout.trim().split("\n").filter((pid) => pid !== "").length, 1, "watchdogs")
        const orphans = yield* Effect.forEach([first, second], (session) =>
          Effect.gen(function*() {
            const [id] = sessionContainers(session)
            const workspace = yield* hostWorkspace(id!)
            return { session, workspace, lease: (yield* inspect(id!))!.Config.Labels[LABEL.ownerLease]! }
          }))
        assert.notStrictEqual(orphans[0]!.lease, orphans[1]!.lease, "each layer holds a lease of its own")
        const killedAt = Date.now()
        yield* kill(child)
        yield* eventually(
          "the orphans were removed",
          () => orphans.every(({ session }) => sessionContainers(session).length === 0),
          30_000,
          250
        )
        console.log(`owner SIGKILLed: its watchdog removed both containers in ${Date.now() - killedAt} ms`)
        // It removes the workspaces just after the containers: a moment later.
        yield* eventually(
          "the temporary workspaces were removed",
          () => orphans.every(({ workspace }) => !existsSync(workspace)),
          5_000,
          50
        )
        yield* eventually(
          "the stale leases were removed",
          () => orphans.every(({ lease }) => !existsSync(lease)),
          5_000,
          250
        )
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
        assert.strictEqual((yield* inspect(id!))!.Config.Labels[LABEL.ownerLease], "")
        const workspace = yield* hostWorkspace(id!)
        yield* kill(child)
        for (let pass = 0; pass < 4; pass++) {
          yield* Effect.sleep("1 second")
          assert.strictEqual(yield* reap, 0)
        }
        assert.isTrue(running(id!))
        dockerCli("rm", "-f", "-v", id!)
        // Kept with it, and ours to remove here.
        rmSync(workspace, { recursive: true, force: true })
      })),
    180_000
  )

  it.live(
    "the reaper removes a container only on a lease it reads as stale, and only one the lease records",
    () =>
      Effect.gen(function*() {
        const unreadable = sessionId("own")
        const fresh = sessionId("own")
        const stale = sessionId("own")
        const stranger = sessionId("own")
        const freshLease = leaseDir(0)
        const staleLease = leaseDir(60_000)
        // A directory that looks like one of our temporary workspaces, named by a container the
        // lease does not record: labels anyone can write (an image, another program).
        const decoy = mkdtempSync(join(tmpdir(), "effect-sandbox-docker-decoy-"))
        writeFileSync(join(decoy, "keep"), "")
        labelledContainer(image, unreadable, { [LABEL.ownerLease]: join(tmpdir(), `${LEASE_DIR_PREFIX}missing`) })
        const freshId = labelledContainer(image, fresh, { [LABEL.ownerLease]: freshLease })
        labelledContainer(image, stale, { [LABEL.ownerLease]: staleLease })
        const strangerId = labelledContainer(image, stranger, {
          [LABEL.ownerLease]: staleLease,
          [LABEL.temporaryWorkspace]: decoy
        })
        for (const [lease, session] of [[freshLease, fresh], [staleLease, stale]] as const) {
          yield* recordContainer(lease, containerName(session), undefined)
        }
        utimesSync(join(freshLease, LEASE_FILE), new Date(), new Date())
        assert.strictEqual(yield* reap, 1)
        assert.lengthOf(sessionContainers(unreadable), 1, "a container without a readable lease was reaped")
        assert.deepStrictEqual(sessionContainers(fresh), [freshId])
        assert.deepStrictEqual(sessionContainers(stale), [])
        assert.deepStrictEqual(
          sessionContainers(stranger),
          [strangerId],
          "a container the lease never recorded was reaped"
        )
        assert.isTrue(existsSync(join(decoy, "keep")), "the path a stranger's label named was removed")
        assert.isTrue(existsSync(staleLease), "a stale lease a container still names was swept")
        dockerCli("rm", "-f", "-v", strangerId)
        assert.strictEqual(yield* reap, 0)
        assert.isFalse(existsSync(staleLease), "a stale lease no container names is swept")
        assert.isTrue(existsSync(freshLease))
        dockerCli("rm", "-f", "-v", containerName(unreadable), freshId)
        for (const dir of [freshLease, decoy]) rmSync(dir, { recursive: true, force: true })
      }),
    60_000
  )
})
