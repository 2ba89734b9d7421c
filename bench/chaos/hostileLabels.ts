/**
 * Part of group 4 (owner-kill): an image whose Dockerfile sets every label of ours
 * (`LABEL effect-sandbox.temporary-workspace=<a host directory>`, a stale lease of
 * ours, a session key, a runtime API prefix and id, ...). Two owners start a
 * DockerRuntime on it, one with a `workspace` of their own and one without, and
 * are SIGKILLed; someone else runs a container of the image beside them, which
 * claims a stale lease of ours. The watchdogs must remove the owners' containers
 * and the runtime's own temporary workspace, and nothing the image named: no
 * label of the image in our containers, the directory it named intact, the given
 * workspace intact; and a reaper pass afterwards must neither reap the stranger
 * nor remove what it names, nor the runtime API adopt it.
 */
import { Context, Effect, Layer } from "effect"
import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DockerEngine } from "../../src/engines/docker/engine.ts"
import { ImageBuilder } from "../../src/engines/docker/imageBuilder.ts"
import { LABEL } from "../../src/engines/docker/labels.ts"
import { LEASE_DIR_PREFIX } from "../../src/providers/docker/leaseDir.ts"
import { reapOrphans } from "../../src/providers/docker/reaper.ts"
import { dockerSandboxes } from "../../src/runtimeApi/dockerSandboxes.ts"
import { Sandboxes } from "../../src/runtimeApi/sandboxes.ts"
import { TAG_LABEL } from "../../src/runtimeImage/imageContext.ts"
import { SandboxConfig } from "../../src/schema/SandboxConfig.ts"
import { LEASE_FILE } from "../../src/server/leaseFile.ts"
import { baseImage, reapRow, startOwner } from "./ownerProcess.ts"
import { atMost, type Row, waitFor } from "./rows.ts"

const docker = (...args: Array<string>) => spawnSync("docker", args, { encoding: "utf8" }).stdout.trim()
const ids = (out: string) => out.split("\n").filter((id) => id !== "")

/** Lease terms that let the watchdogs act within seconds of the kill. */
const TERMS = { renewEvery: 500, staleAfter: 5_000 }

export const ROW_HARM =
  "owner-kill: hostile image labels: host paths it named removed, its labels in ours, strangers taken"
export const ROW_REAP = "owner-kill: hostile image owners SIGKILLed, containers and own workspace gone after"

/** What the image says, and the host directories the run made for it. */
const setUp = () => {
  const run = randomBytes(4).toString("hex")
  const decoy = mkdtempSync(join(tmpdir(), "effect-sandbox-docker-decoy-"))
  writeFileSync(join(decoy, "keep"), "named by the image")
  // What the stranger claims. Stale only during our reaper pass (`reapAsStale`): on an engine shared
  // with other versions of the runtime, one from before labels were checked would take the claim.
  const claimedLease = mkdtempSync(join(tmpdir(), LEASE_DIR_PREFIX))
  writeFileSync(join(claimedLease, LEASE_FILE), JSON.stringify({ renewEveryMs: 100, staleAfterMs: 3_600_000 }))
  const given = mkdtempSync(join(tmpdir(), "chaos-hostile-given-"))
  chmodSync(given, 0o777)
  const prefix = `chaos-hostile-${run}`
  const labels: Readonly<Record<string, string>> = {
    [LABEL.managed]: "true",
    [LABEL.session]: "hostile",
    [LABEL.ownerLease]: claimedLease,
    // Our orphans would never be reaped, were it to survive.
    [LABEL.keepAlive]: "true",
    [LABEL.sessionKey]: "chosen-by-the-image",
    [LABEL.temporaryWorkspace]: decoy,
    [LABEL.runtimeApi]: prefix,
    [LABEL.runtimeId]: "rt-hostile",
    [LABEL.resourceFactor]: "64"
  }
  return { run, tag: `effect-sandbox-chaos-hostile:${run}`, prefix, decoy, claimedLease, given, labels }
}

type SetUp = ReturnType<typeof setUp>

/**
 * Build the image, and run it as someone else would, labelling it as they please: the image's
 * labels, with a claim on a stale lease of ours, which that lease never recorded. Its id.
 */
const buildAndRun = (s: SetUp) => {
  const lines = Object.entries(s.labels).map(([k, v]) => `LABEL ${JSON.stringify(k)}=${JSON.stringify(v)}`)
  const build = spawnSync("docker", ["build", "-q", "-t", s.tag, "-"], {
    input: [`FROM ${baseImage()}`, ...lines].join("\n"),
    encoding: "utf8"
  })
  if (build.status !== 0) throw new Error(`cannot build the hostile image: ${build.stderr}`)
  const name = `chaos-hostile-stranger-${s.run}`
  const stranger = docker(
    "run",
    "-d",
    "--name",
    name,
    "--label",
    `${LABEL.keepAlive}=false`,
    "--entrypoint",
    "sleep",
    s.tag,
    "600"
  )
  if (stranger === "") throw new Error("cannot run the hostile image")
  return stranger
}

/** One reaper pass, as any DockerRuntime runs it, while the stranger's lease reads as stale. */
const reapAsStale = async (lease: string) => {
  const file = join(lease, LEASE_FILE)
  utimesSync(file, new Date(0), new Date(0))
  try {
    await Effect.runPromise(reapOrphans().pipe(Effect.provide(DockerEngine.layer)))
  } finally {
    if (existsSync(file)) utimesSync(file, new Date(), new Date())
  }
}

/** The sandboxes the runtime API (with the prefix the image claims) lists. */
const apiList = (prefix: string) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const context = yield* Layer.build(
        dockerSandboxes({ sandbox: new SandboxConfig({}), containerNamePrefix: prefix }).pipe(
          Layer.provide(ImageBuilder.layer),
          Layer.provide(DockerEngine.layer)
        )
      )
      return yield* Context.get(context, Sandboxes).list
    }).pipe(Effect.scoped)
  )

/**
 * Remove everything the run made: owners still alive, their containers and the stranger, the
 * runtime images built from the image (they inherit its labels), the image, the directories.
 */
const tearDown = (s: SetUp, pids: ReadonlyArray<number>) => {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // Killed already.
    }
  }
  const left = [
    ...pids.flatMap((pid) => ids(docker("ps", "-aq", "--filter", `label=${LABEL.session}=chaos-owner-${pid}`))),
    ...ids(docker("ps", "-aq", "--filter", `name=chaos-hostile-stranger-${s.run}`))
  ]
  if (left.length > 0) docker("rm", "-f", "-v", ...left)
  const built = ids(
    docker("images", "-q", "--filter", `label=${TAG_LABEL}`, "--filter", `label=${LABEL.runtimeApi}=${s.prefix}`)
  )
  docker("rmi", ...built, s.tag)
  for (const dir of [s.decoy, s.claimedLease, s.given]) rmSync(dir, { recursive: true, force: true })
}

export const hostileLabelRows = async (boundMs: number): Promise<ReadonlyArray<Row>> => {
  const s = setUp()
  const pids: Array<number> = []
  try {
    const stranger = buildAndRun(s)
    const options = (workspace?: string) =>
      JSON.stringify({ ownerLease: TERMS, ...(workspace === undefined ? {} : { workspace }) })
    const started = await Promise.allSettled([
      startOwner(["docker", s.tag, options(s.given)]),
      startOwner(["docker", s.tag, options()])
    ])
    const owners = started.flatMap((o) => o.status === "fulfilled" ? [o.value] : [])
    pids.push(...owners.map((o) => o.pid))
    for (const o of started) if (o.status === "rejected") throw o.reason
    const containers = owners.map((o) => docker("ps", "-aq", "--filter", `label=${LABEL.session}=${o.id}`))
    const labelsOf = (c: string): Record<string, string> =>
      JSON.parse(docker("inspect", "-f", "{{json .Config.Labels}}", c))
    const ours = containers.map(labelsOf)
    // Each image value that survived in a container of ours (`managed` can only say what ours says).
    const survived = ours.flatMap((labels) =>
      Object.entries(s.labels).filter(([k, v]) => k !== LABEL.managed && labels[k] === v)
    )
    for (const [k, v] of survived) console.log(`  hostile label survived: ${k}=${v}`)
    const workspace = ours[1]![LABEL.temporaryWorkspace] ?? ""
    const leases = ours.map((labels) => labels[LABEL.ownerLease] ?? "")
    for (const owner of owners) process.kill(owner.pid, "SIGKILL")
    const left = () => [
      ...containers.filter((c) => docker("ps", "-aq", "--filter", `id=${c}`) !== "").map((c) => `container ${c}`),
      ...(workspace !== "" && existsSync(workspace) ? [`workspace ${workspace}`] : []),
      // A watchdog sweeps its lease last: gone, its pass has done all it would.
      ...leases.filter((lease) => lease !== "" && existsSync(lease)).map((lease) => `lease ${lease}`)
    ]
    const waited = await waitFor(() => left().length === 0, boundMs, 250)
    const remaining = left()
    await reapAsStale(s.claimedLease)
    const harms = [
      ...survived.map(([k]) => `image label ${k} in our container`),
      ...(existsSync(s.decoy) && readFileSync(join(s.decoy, "keep"), "utf8") === "named by the image"
        ? []
        : [`the image's directory ${s.decoy} removed`]),
      ...(existsSync(s.given) ? [] : [`the given workspace ${s.given} removed`]),
      ...(docker("ps", "-aq", "--filter", `id=${stranger}`) === "" ? ["the stranger reaped"] : []),
      ...(await apiList(s.prefix)).map((sandbox) => `adopted by the runtime API as ${sandbox.runtimeId}`)
    ]
    for (const harm of harms) console.log(`  hostile image: ${harm}`)
    return [
      atMost(ROW_HARM, harms.length, "count", 0),
      reapRow(ROW_REAP, waited, boundMs, remaining)
    ]
  } finally {
    tearDown(s, pids)
  }
}
