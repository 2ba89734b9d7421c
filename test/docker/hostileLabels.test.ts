/**
 * An image that carries our labels (`LABEL effect-sandbox.temporary-workspace=<a host directory>`
 * and every other one) gets nothing from them: the containers made from it carry our labels
 * only, so when their owner crashes the watchdog and the reaper remove the runtime's own
 * temporary workspace and leave the image's directory alone, with a `workspace` given or not; a
 * container someone else ran from the image is neither reaped nor adopted by the runtime API,
 * and the API hands out its own session key.
 */
import { afterAll, assert, beforeAll, it } from "@effect/vitest"
import { Context, Effect, Layer, Redacted } from "effect"
import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DockerEngine } from "../../src/engines/docker/engine.ts"
import { ImageBuilder } from "../../src/engines/docker/imageBuilder.ts"
import { LABEL } from "../../src/engines/docker/labels.ts"
import { LEASE_DIR_PREFIX } from "../../src/providers/docker/leaseDir.ts"
import { dockerSandboxes } from "../../src/runtimeApi/dockerSandboxes.ts"
import { Sandboxes } from "../../src/runtimeApi/sandboxes.ts"
import { TAG_LABEL } from "../../src/runtimeImage/imageContext.ts"
import { SandboxConfig } from "../../src/schema/SandboxConfig.ts"
import { LEASE_FILE } from "../../src/server/leaseFile.ts"
import { eventually } from "../eventually.ts"
import { dockerCli, inspect, removeLeftovers, sessionContainers, sessionId } from "./helpers.ts"
import { baseImage, describeDocker } from "./infra.ts"
import { hostWorkspace, kill, owner, reap } from "./owners.ts"

const run = randomBytes(4).toString("hex")
const TAG = `effect-sandbox-test-hostile:${run}`
/** The runtime API prefix the image claims its containers for. */
const API_PREFIX = `dt-hostile-${run}`
const CHOSEN_KEY = "chosen-by-the-image"

/** A directory named like the runtime's temporary workspaces, so that only the labels' handling protects it. */
const decoy = mkdtempSync(join(tmpdir(), "effect-sandbox-docker-decoy-"))
writeFileSync(join(decoy, "keep"), "the image named me")

/**
 * A lease of our own user, which the image's containers claim. Stale only while our reaper runs
 * (`asStale`): on an engine shared with other versions of the runtime, a reaper of this repository
 * before labels were checked would otherwise act on the stranger's claim and remove the decoy.
 */
const claimedLease = mkdtempSync(join(tmpdir(), LEASE_DIR_PREFIX))
writeFileSync(join(claimedLease, LEASE_FILE), JSON.stringify({ renewEveryMs: 100, staleAfterMs: 3_600_000 }))

/** Run `effect` while the claimed lease reads as stale, as a crashed owner leaves it (unless a reaper swept it). */
const asStale = <A, E, R>(effect: Effect.Effect<A, E, R>) => {
  const file = join(claimedLease, LEASE_FILE)
  return Effect.acquireUseRelease(
    Effect.sync(() => utimesSync(file, new Date(0), new Date(0))),
    () => effect,
    () => Effect.sync(() => existsSync(file) && utimesSync(file, new Date(), new Date()))
  )
}

/** Every label of ours, with the values a hostile image would choose. */
const HOSTILE: Readonly<Record<string, string>> = {
  [LABEL.managed]: "true",
  [LABEL.session]: "hostile",
  [LABEL.ownerLease]: claimedLease,
  // Our orphans would never be reaped, were it to survive.
  [LABEL.keepAlive]: "true",
  [LABEL.sessionKey]: CHOSEN_KEY,
  [LABEL.temporaryWorkspace]: decoy,
  [LABEL.runtimeApi]: API_PREFIX,
  [LABEL.runtimeId]: "rt-hostile",
  [LABEL.resourceFactor]: "64"
}

/** Someone else's container of the image (its session label is the image's). */
const stranger = `dt-hostile-stranger-${run}`
const strangerThere = () => sessionContainers("hostile").length === 1

const decoyIntact = () => existsSync(decoy) && readFileSync(join(decoy, "keep"), "utf8") === "the image named me"

describeDocker("Docker labels from a hostile image", () => {
  beforeAll(() => {
    const labels = Object.entries(HOSTILE).map(([k, v]) => `LABEL ${JSON.stringify(k)}=${JSON.stringify(v)}`)
    const build = spawnSync("docker", ["build", "-q", "-t", TAG, "-"], {
      input: [`FROM ${baseImage()}`, ...labels].join("\n"),
      encoding: "utf8"
    })
    assert.strictEqual(build.status, 0, build.stderr)
    // Someone else runs the image, labelling it as they please: the labels are the image's, with a
    // claim on a stale lease of ours, which that lease never recorded.
    const started = dockerCli(
      "run",
      "-d",
      "--name",
      stranger,
      "--label",
      `${LABEL.keepAlive}=false`,
      "--entrypoint",
      "sleep",
      TAG,
      "600"
    )
    assert.strictEqual(started.status, 0, started.stderr)
  }, 120_000)

  afterAll(() => {
    removeLeftovers("hostile")
    dockerCli("rm", "-f", "-v", stranger)
    dockerCli("ps", "-aq", "--filter", `name=${API_PREFIX}-`).stdout.split("\n").filter((id) => id !== "")
      .forEach((id) => dockerCli("rm", "-f", "-v", id))
    // The runtime images built from it inherit its labels: found by them, removed before it.
    const built = dockerCli(
      "images",
      "-q",
      "--filter",
      `label=${TAG_LABEL}`,
      "--filter",
      `label=${LABEL.runtimeApi}=${API_PREFIX}`
    ).stdout.split("\n").filter((id) => id !== "")
    dockerCli("rmi", ...built, TAG)
    for (const dir of [decoy, claimedLease]) rmSync(dir, { recursive: true, force: true })
  })

  it.live(
    "owners on the image crash, with a workspace given and without: their watchdogs remove the runtime's temporary workspace and leave the image's directory",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const given = mkdtempSync(join(tmpdir(), "dt-hostile-given-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(given, { recursive: true, force: true })))
        // The sandbox user's to write, whoever we are.
        chmodSync(given, 0o777)
        const withWorkspace = sessionId("hostile")
        const temporary = sessionId("hostile")
        // In our PID namespace, so their watchdogs outlive them; one after the other (each
        // rebuilds the payload from source). Terms as the watchdog test's.
        const terms = { ownerLease: { renewEvery: 500, staleAfter: 5_000 } }
        const owners = [
          yield* owner(TAG, withWorkspace, { ...terms, workspace: given }, false),
          yield* owner(TAG, temporary, terms, false)
        ]
        const [givenId] = sessionContainers(withWorkspace)
        const [temporaryId] = sessionContainers(temporary)
        const workspace = yield* hostWorkspace(temporaryId!)
        const leases: Array<string> = []
        for (const [id, session, expected] of [[givenId, withWorkspace, ""], [temporaryId, temporary, workspace]]) {
          const info = (yield* inspect(id!))!
          leases.push(info.Config.Labels[LABEL.ownerLease]!)
          const labels = info.Config.Labels
          // Ours, every one: written at create, empty where we have no value.
          assert.strictEqual(labels[LABEL.temporaryWorkspace], expected)
          assert.strictEqual(labels[LABEL.session], session)
          assert.strictEqual(labels[LABEL.keepAlive], "false")
          assert.match(labels[LABEL.ownerLease]!, new RegExp(`^${tmpdir()}/${LEASE_DIR_PREFIX}`))
          assert.notStrictEqual(labels[LABEL.ownerLease], claimedLease)
          assert.notInclude([CHOSEN_KEY, ""], labels[LABEL.sessionKey])
          for (const key of [LABEL.runtimeApi, LABEL.runtimeId, LABEL.resourceFactor]) {
            assert.strictEqual(labels[key], "", key)
          }
        }
        yield* Effect.forEach(owners, kill, { discard: true })
        yield* eventually(
          "the watchdogs removed both orphans",
          () => sessionContainers(withWorkspace).length + sessionContainers(temporary).length === 0,
          60_000,
          250
        )
        // A watchdog's pass removes the containers, then their workspaces, then sweeps the lease:
        // once both leases are gone, both passes have done all they would.
        yield* eventually("both leases were swept", () => leases.every((lease) => !existsSync(lease)), 10_000, 50)
        assert.isFalse(existsSync(workspace), "the runtime's own temporary workspace remains")
        // And a reaper pass of our own, which finds nothing more to do.
        assert.strictEqual(yield* reap, 0)
        assert.isTrue(decoyIntact(), "the directory the image's label named was removed")
        assert.isTrue(existsSync(given), "the given workspace was removed")
      })),
    240_000
  )

  it.live(
    "a container someone else ran from the image is neither reaped nor adopted; the runtime API gives its own sandbox its own key",
    () =>
      Effect.gen(function*() {
        assert.strictEqual(yield* asStale(reap), 0)
        assert.isTrue(decoyIntact(), "the directory the image's label named was removed")
        assert.isTrue(strangerThere(), "a container the lease never recorded was reaped")

        const api = yield* Layer.build(
          dockerSandboxes({ sandbox: new SandboxConfig({}), containerNamePrefix: API_PREFIX }).pipe(
            Layer.provide(ImageBuilder.layer),
            Layer.provide(DockerEngine.layer)
          )
        ).pipe(Effect.map((context) => Context.get(context, Sandboxes)))
        assert.deepStrictEqual(yield* api.list, [], "a container run by someone else was adopted")
        const session = sessionId("hostile")
        const sandbox = yield* api.start({ session_id: session, image: TAG, command: ["sleep", "600"] })
        assert.match(sandbox.runtimeId, /^rt-[0-9a-f]{24}$/)
        assert.notInclude([CHOSEN_KEY, ""], Redacted.value(sandbox.sessionApiKey))
        assert.strictEqual(sandbox.resourceFactor, 1)
        assert.deepStrictEqual((yield* api.list).map((s) => s.runtimeId), [sandbox.runtimeId])
        const labels = (yield* inspect(`${API_PREFIX}-${session}`))!.Config.Labels
        assert.strictEqual(labels[LABEL.temporaryWorkspace], "")
        assert.strictEqual(labels[LABEL.ownerLease], "")
        yield* api.stop(sandbox)
        assert.isNull(yield* inspect(`${API_PREFIX}-${session}`))
      }).pipe(Effect.scoped),
    120_000
  )
})
