/**
 * The Runloop tests' set-up: the blueprint images (the runtime image for Runloop's user `user`,
 * uid 1000, the same one the E2B tests build, with `blueprintDockerfile` on top; stock ones), a stand-in per
 * test file started before its tests and checked empty after them, and RunloopRuntime pointed at
 * it through the SDK's own `baseURL` and the stand-in's tunnels.
 */
import { afterAll, assert, beforeAll } from "@effect/vitest"
import { Layer, Redacted } from "effect"
import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import {
  blueprintDockerfile,
  DEFAULT_BLUEPRINT,
  RunloopRuntime,
  type RunloopRuntimeOptions
} from "../../../src/runloop.ts"
import { baseImage } from "../../docker/infra.ts"
import { nodeOnlyImage, runtimeImage } from "../e2b/fixture.ts"
import { leftovers } from "./devboxes.ts"
import { type RunloopStandIn, type StandInOptions, startStandIn } from "./server.ts"

/** An image built from `dockerfile`, tagged by its hash (built once, then kept as runtime images are). */
const builtImage = (dockerfile: string) => {
  const tag = `effect-sandbox-runloop-test:${createHash("sha256").update(dockerfile).digest("hex").slice(0, 12)}`
  if (spawnSync("docker", ["image", "inspect", tag], { stdio: "ignore" }).status !== 0) {
    const built = spawnSync("docker", ["build", "-q", "-t", tag, "-"], { input: dockerfile, encoding: "utf8" })
    if (built.status !== 0) throw new Error(`Cannot build ${tag}: ${built.stderr}`)
  }
  return tag
}

/**
 * The blueprints: ours, `node-only` (Node on the PATH, no payload: the E2B tests' image, for the
 * upload fallback) and `base` (the base image alone: no payload, no Node).
 */
export const blueprints = async (): Promise<Record<string, string>> => {
  const runtime = await runtimeImage()
  return {
    [DEFAULT_BLUEPRINT]: builtImage(blueprintDockerfile(runtime)),
    "node-only": nodeOnlyImage(runtime),
    base: baseImage()
  }
}

/** A stand-in for the tests of one file (the function it returns gives it in a test). */
export const useStandIn = (options: Omit<StandInOptions, "blueprints"> = {}) => {
  let standIn: RunloopStandIn | undefined
  beforeAll(async () => {
    standIn = await startStandIn({ blueprints: await blueprints(), ...options })
  }, 300_000)
  afterAll(async () => {
    if (standIn === undefined) return
    // Every runtime shut its devbox down: the stand-in holds no container before close() removes them.
    const left = await leftovers(standIn.instance)
    await standIn.close()
    assert.deepStrictEqual(left, [])
  })
  return () => {
    if (standIn === undefined) throw new Error("the Runloop stand-in did not start")
    return standIn
  }
}

/** RunloopRuntime options for the SDK against `standIn`. */
export const standInOptions = (
  standIn: RunloopStandIn,
  options: RunloopRuntimeOptions = {}
): RunloopRuntimeOptions => ({
  apiKey: Redacted.make(standIn.apiKey),
  baseUrl: standIn.baseUrl,
  tunnelUrl: standIn.tunnelUrl,
  ...options
})

/** A RunloopRuntime on the stand-in (fresh: each build is its own devbox). */
export const runloopLayer = (standIn: RunloopStandIn, options: RunloopRuntimeOptions = {}) =>
  Layer.fresh(RunloopRuntime.layer(standInOptions(standIn, options)))
