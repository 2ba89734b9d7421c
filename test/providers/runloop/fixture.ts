/**
 * The Runloop tests' set-up: the blueprint images (the runtime image for Runloop's user `user`,
 * uid 1000, the same one the E2B tests build, with `blueprintDockerfile` on top; stock ones; on
 * request one from Docker's tools runtime image, for `vscode`), a stand-in per
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
import { toolsRuntimeImage } from "../runtimeImages.ts"
import { type Devbox, leftovers } from "./devboxes.ts"
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

/** The blueprint made from the tools image (code-server: the `vscode` option), for its user `TOOLS_USER`. */
export const TOOLS_BLUEPRINT = "effect-sandbox-runtime-tools"

/**
 * The devbox user of `TOOLS_BLUEPRINT`: the user of the runtime image Docker's tools tests build,
 * so that image is shared (Runloop lets a devbox run as any user of its image: `user_parameters`).
 */
export const TOOLS_USER = { user: "openhands", userId: 1000 } as const

/**
 * The blueprints: ours, `node-only` (Node on the PATH, no payload: the E2B tests' image, for the
 * upload fallback) and `base` (the base image alone: no payload, no Node); with `tools`, also
 * `TOOLS_BLUEPRINT`.
 */
export const blueprints = async (
  options: { readonly tools?: boolean | undefined } = {}
): Promise<Record<string, string>> => {
  const runtime = await runtimeImage()
  return {
    [DEFAULT_BLUEPRINT]: builtImage(blueprintDockerfile(runtime)),
    "node-only": nodeOnlyImage(runtime),
    base: baseImage(),
    ...(options.tools === true
      ? { [TOOLS_BLUEPRINT]: builtImage(blueprintDockerfile(await toolsRuntimeImage(), TOOLS_USER)) }
      : {})
  }
}

/** A stand-in for the tests of one file (the function it returns gives it in a test); `tools`: with `TOOLS_BLUEPRINT`. */
export const useStandIn = (options: Omit<StandInOptions, "blueprints"> & { readonly tools?: boolean } = {}) => {
  let standIn: RunloopStandIn | undefined
  beforeAll(async () => {
    const { tools, ...standInOptions } = options
    standIn = await startStandIn({ blueprints: await blueprints({ tools }), ...standInOptions })
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

/** The devbox the stand-in made for `session` (by our session metadata). */
export const devboxOf = (standIn: RunloopStandIn, session: string): Devbox =>
  [...standIn.devboxes.byId.values()].find((d) => d.metadata["effect-sandbox.session"] === session)!
