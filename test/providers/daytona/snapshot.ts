/**
 * The image the stand-in maps our snapshot to: the runtime image DockerRuntime builds from the
 * base image, with the snapshot's Dockerfile (`snapshotDockerfile`, what docs/runtimes/daytona.md
 * has users build and push) on top. Built once per runtime image and kept, as runtime images are.
 */
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import { snapshotDockerfile } from "../../../src/daytona.ts"
import { DockerEngine, ImageBuilder } from "../../../src/docker.ts"

/** The snapshot image for `baseImage` (the runtime image is built first when missing). */
export const snapshotImage = (baseImage: string) =>
  Effect.gen(function*() {
    const runtime = yield* (yield* ImageBuilder).ensure({ baseImage, userId: 1000, username: "openhands" })
    const dockerfile = snapshotDockerfile(runtime)
    const tag = `effect-sandbox-daytona-snapshot:${createHash("sha256").update(dockerfile).digest("hex").slice(0, 12)}`
    const exists = spawnSync("docker", ["image", "inspect", tag], { stdio: "ignore" }).status === 0
    if (!exists) {
      const built = spawnSync("docker", ["build", "-q", "-t", tag, "-"], { input: dockerfile, encoding: "utf8" })
      if (built.status !== 0) throw new Error(`Cannot build ${tag}: ${built.stderr}`)
    }
    return tag
  }).pipe(Effect.provide(ImageBuilder.layer), Effect.provide(DockerEngine.layer))
