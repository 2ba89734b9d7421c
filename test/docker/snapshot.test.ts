/**
 * Docker's snapshots end to end: a committed image with the workspace inside. Files written before
 * the snapshot, in the workspace and elsewhere, are in a fork, owned as they were (the conformance
 * suite has forks diverging); a snapshot goes with the runtime that took it unless kept; a kept one is listed, starts
 * new runtimes and ends with `removeSnapshot`; a SIGKILLed owner's snapshot is reaped. One source
 * runtime serves the cases that only read it.
 */
import { afterAll, assert, beforeAll, it } from "@effect/vitest"
import { Effect, Exit, Schedule, Scope } from "effect"
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DockerRuntime } from "../../src/docker.ts"
import { LABEL } from "../../src/engines/docker/labels.ts"
import { InvalidOptionsError, type RuntimeShape } from "../../src/index.ts"
import { DEFAULT_SANDBOX_UID } from "../../src/runtimeImage/sandboxUser.ts"
import { runtimeImageFor } from "../providers/runtimeImages.ts"
import {
  assertNoContainer,
  buildRuntime,
  dockerCli,
  dockerLayer,
  removeLeftovers,
  sessionContainers,
  sessionId,
  sh
} from "./helpers.ts"
import { baseImage, describeDocker } from "./infra.ts"
import { kill, owner, reap } from "./owners.ts"

/** Whether the engine has an image of this name. */
const imageExists = (name: string) => dockerCli("image", "inspect", name).status === 0

/** The snapshot images labelled with a session. */
const sessionSnapshots = (session: string) =>
  dockerCli(
    "images",
    "--format",
    "{{.Repository}}:{{.Tag}}",
    "--filter",
    `label=${LABEL.snapshot}=true`,
    "--filter",
    `label=${LABEL.session}=${session}`
  ).stdout.split("\n").filter((line) => line !== "")

describeDocker("DockerRuntime snapshots", () => {
  const image = baseImage()
  const session = sessionId("snap")
  let source: { readonly rt: RuntimeShape; readonly release: Effect.Effect<void> }
  const scope = Effect.runSync(Scope.make())

  beforeAll(async () => {
    await runtimeImageFor(image, 1000, "openhands")
    source = await Effect.runPromise(
      Effect.gen(function*() {
        const built = yield* buildRuntime(dockerLayer(image, { sessionId: session }))
        yield* built.rt.write({ path: "/workspace/project/notes.txt", content: "written before the snapshot" })
        yield* sh(built.rt, "mkdir -p /home/openhands/.cache && echo outside > /home/openhands/.cache/state")
        return built
      }).pipe(Scope.provide(scope))
    )
  }, 300_000)
  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    removeLeftovers("snap")
  })

  it.live(
    "a fork has the files written outside the workspace too, owned as they were, and its snapshot goes after it",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const { rt } = source
        assert.isTrue(rt.info.capabilities.snapshot)
        const forkScope = yield* Scope.make()
        yield* Effect.addFinalizer(() => Scope.close(forkScope, Exit.void))
        const [fork] = yield* rt.fork(1).pipe(Scope.provide(forkScope))
        assert.notStrictEqual(fork!.info.id, rt.info.id)
        assert.strictEqual(
          (yield* sh(fork!, "cat /workspace/project/notes.txt")).content,
          "written before the snapshot"
        )
        assert.strictEqual((yield* sh(fork!, "cat /home/openhands/.cache/state")).content, "outside")
        assert.strictEqual((yield* sh(fork!, "stat -c %U /workspace/project/notes.txt")).content, "openhands")
        // The fork's snapshot lives as long as the fork: removed after it.
        const [forkSnapshot] = sessionSnapshots(session)
        assert.isDefined(forkSnapshot)
        yield* Scope.close(forkScope, Exit.void)
        assertNoContainer(fork!.info.id)
        assert.isFalse(imageExists(forkSnapshot!), "the fork's snapshot remains")
        assert.deepStrictEqual(sessionSnapshots(session), [])
      })),
    120_000
  )

  it.live(
    "a snapshot goes with its runtime unless kept; a kept one is listed, starts runtimes, and is removed",
    () =>
      Effect.scoped(Effect.gen(function*() {
        // A workspace of its own: a fork gets a directory of its own, and the taker's is left alone.
        const dir = yield* Effect.acquireRelease(
          Effect.sync(() => mkdtempSync(join(tmpdir(), "effect-sandbox-snaptest-"))),
          (made) => Effect.sync(() => rmSync(made, { recursive: true, force: true }))
        )
        chownSync(dir, DEFAULT_SANDBOX_UID, DEFAULT_SANDBOX_UID)
        const own = sessionId("snap")
        const taker = yield* buildRuntime(dockerLayer(image, { sessionId: own, workspace: dir }))
        yield* taker.rt.write({ path: "/workspace/kept.txt", content: "kept" })
        const fork = yield* Effect.scoped(Effect.gen(function*() {
          const [copy] = yield* taker.rt.fork(1)
          yield* sh(copy!, "echo from the fork > /workspace/kept.txt && touch /workspace/fork-only")
          assert.strictEqual((yield* sh(copy!, "cat /workspace/kept.txt")).content, "from the fork")
          return copy!
        }))
        assertNoContainer(fork.info.id)
        assert.deepStrictEqual(readdirSync(dir), ["kept.txt"])
        // As written (the write action ends the file with a newline), not as the fork rewrote it.
        assert.strictEqual(readFileSync(join(dir, "kept.txt"), "utf8"), "kept\n")
        const passing = yield* taker.rt.snapshot()
        const kept = yield* taker.rt.snapshot({ keep: true })
        assert.deepInclude(passing, { provider: "Docker", keeps: "files", sessionId: own, kept: false })
        assert.deepInclude(kept, { provider: "Docker", keeps: "files", sessionId: own, kept: true })
        // No session key in the image's labels: a snapshot is no way into its session.
        assert.strictEqual(
          dockerCli("image", "inspect", "-f", `{{index .Config.Labels "${LABEL.sessionKey}"}}`, kept.id).stdout.trim(),
          ""
        )
        const listed = (yield* DockerRuntime.listSnapshots()).map((snapshot) => snapshot.id)
        assert.includeMembers(listed, [passing.id, kept.id])
        yield* taker.release
        assertNoContainer(own)
        assert.isFalse(imageExists(passing.id), "the snapshot not kept outlived its runtime")
        assert.isTrue(imageExists(kept.id), "the kept snapshot went with its runtime")

        const started = yield* buildRuntime(dockerLayer(image, { fromSnapshot: kept }))
        assert.strictEqual((yield* sh(started.rt, "cat /workspace/kept.txt")).content, "kept")
        yield* started.release
        assertNoContainer(started.rt.info.id)
        yield* DockerRuntime.removeSnapshot(kept)
        assert.isFalse(imageExists(kept.id))
        // Removing one already gone is no failure.
        yield* DockerRuntime.removeSnapshot(kept)
      })),
    120_000
  )

  it.live("fromSnapshot with a workspace of one's own, and a fork of none, are refused before anything starts", () =>
    Effect.gen(function*() {
      const refused = yield* Effect.flip(
        buildRuntime(dockerLayer(image, { fromSnapshot: "effect-sandbox-snapshot:none", workspace: "/tmp/x" }))
      )
      assert.instanceOf(refused, InvalidOptionsError)
      assert.strictEqual(
        refused.message,
        "DockerRuntime options: fromSnapshot: the snapshot brings its own workspace: leave workspace out."
      )
      const none = yield* Effect.flip(Effect.scoped(source.rt.fork(0)))
      assert.instanceOf(none, InvalidOptionsError)
      assert.strictEqual(none.message, "fork: count must be a whole number, 1 or more (got 0).")
    }))
})

describeDocker("DockerRuntime snapshots of a dead owner", () => {
  it.live("are reaped once its lease is stale", () =>
    Effect.scoped(Effect.gen(function*() {
      const image = baseImage()
      const dead = sessionId("snap")
      // The owner's lease in a temp dir of this test's own: on a shared machine, a reaper of an older
      // version (which knows no snapshots) would sweep the stale lease before our pass reads it.
      const privateTmp = mkdtempSync(join(tmpdir(), "effect-sandbox-snaptest-"))
      const previous = process.env["TMPDIR"]
      yield* Effect.acquireRelease(
        Effect.sync(() => process.env["TMPDIR"] = privateTmp),
        () =>
          Effect.sync(() => {
            if (previous === undefined) delete process.env["TMPDIR"]
            else process.env["TMPDIR"] = previous
            rmSync(privateTmp, { recursive: true, force: true })
          })
      )
      const child = yield* owner(image, dead, { snapshot: true, ownerLease: { renewEvery: 200, staleAfter: 1_500 } })
      const [snapshot] = sessionSnapshots(dead)
      assert.isDefined(snapshot)
      yield* kill(child)
      // The lease goes stale 1.5 s after the kill; a pass then confirms it over two renewals.
      yield* reap.pipe(
        Effect.repeat({
          schedule: Schedule.spaced("500 millis"),
          until: () => !imageExists(snapshot!) && sessionContainers(dead).length === 0,
          times: 40
        })
      )
      assert.isFalse(imageExists(snapshot!), "the dead owner's snapshot remains")
      assertNoContainer(dead)
    })), 180_000)
})
