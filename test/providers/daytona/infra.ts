/**
 * The Daytona tests' set-up: a stand-in (server.ts) for the file, started before its tests with
 * the snapshot image built, closed after them; and the DaytonaRuntime layer pointed at it through
 * the SDK's own `apiUrl` option.
 */
import { afterAll, assert, beforeAll } from "@effect/vitest"
import { Effect, Layer, Redacted, Schedule } from "effect"
import { DaytonaRuntime, type DaytonaRuntimeOptions, DEFAULT_SNAPSHOT } from "../../../src/daytona.ts"
import { baseImage } from "../../docker/infra.ts"
import { leftovers, type Snapshot } from "./sandboxes.ts"
import { type DaytonaStandIn, startStandIn } from "./server.ts"
import { snapshotImage } from "./snapshot.ts"

/** Daytona's create as the SDK sends it, for the fault plan (test/providers/faults.ts). */
export const CREATE = { method: "POST", path: /^\/api\/sandbox$/ }

/** A promise settled when the test says (a held answer, a held state change), and what settles it. */
export const gate = () => {
  const settled: { open: () => void } = { open: () => undefined }
  const promise = new Promise<void>((resolve) => (settled.open = resolve))
  return { promise, open: () => settled.open() }
}

/** Wait for a condition the stand-in reaches on its own time. */
export const until = (check: () => boolean) =>
  Effect.sync(check).pipe(Effect.repeat({ schedule: Schedule.spaced("50 millis"), until: (ok) => ok }))

/** No sandbox of the stand-in is left undeleted. */
export const assertAllDeleted = (standIn: DaytonaStandIn) =>
  assert.deepStrictEqual(
    [...standIn.sandboxes.byId.values()].filter((s) => s.state !== "destroyed").map((s) => s.id),
    []
  )

/** Our snapshot's image as a snapshot of Daytona's default class, `container`, which Daytona does not pause. */
export const CONTAINER_SNAPSHOT = "effect-sandbox-container"

/**
 * A stand-in for the tests of one file (the function it returns gives it in a test), with our
 * snapshot mapped to its image as the docs make it (class `linux-vm`, which pauses), the same image
 * as CONTAINER_SNAPSHOT, and `extra` snapshots (name -> image, built before the stand-in starts).
 */
export const useStandIn = (extra: () => Promise<Readonly<Record<string, Snapshot>>> = async () => ({})) => {
  let standIn: DaytonaStandIn | undefined
  beforeAll(async () => {
    const image = await Effect.runPromise(snapshotImage(baseImage()))
    standIn = await startStandIn({
      snapshots: {
        [DEFAULT_SNAPSHOT]: { image, sandboxClass: "linux-vm" },
        [CONTAINER_SNAPSHOT]: image,
        ...(await extra())
      }
    })
  }, 300_000)
  afterAll(async () => {
    if (standIn === undefined) return
    const instance = standIn.instance
    // Every runtime deleted its sandbox: the stand-in holds no container before close() removes them.
    const left = await leftovers(instance)
    await standIn.close()
    assert.deepStrictEqual(left, [])
  })
  return () => {
    if (standIn === undefined) throw new Error("the Daytona stand-in did not start")
    return standIn
  }
}

/** A DaytonaRuntime on the stand-in (fresh: each build is its own sandbox). */
export const daytonaLayer = (standIn: DaytonaStandIn, options: DaytonaRuntimeOptions = {}) =>
  Layer.fresh(DaytonaRuntime.layer({ apiKey: Redacted.make(standIn.apiKey), apiUrl: standIn.apiUrl, ...options }))
