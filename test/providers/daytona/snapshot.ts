/**
 * The images the stand-in maps snapshot names to, each made from the runtime image DockerRuntime
 * builds from the base image: our snapshot (`snapshotDockerfile` on top, what
 * docs/runtimes/daytona.md has users build and push), a "stock" image with a Node on PATH but
 * none of our server, for the upload fallback, and our snapshot with a server that exits at once. Built once per Dockerfile and kept, as runtime
 * images are.
 */
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import { snapshotDockerfile } from "../../../src/daytona.ts"
import { DockerEngine, ImageBuilder } from "../../../src/docker.ts"

/** An image built from the Dockerfile `on(runtimeImage)` gives, tagged by its hash. */
const derivedImage = (baseImage: string, on: (runtimeImage: string) => string) =>
  Effect.gen(function*() {
    const runtime = yield* (yield* ImageBuilder).ensure({ baseImage, userId: 1000, username: "openhands" })
    const dockerfile = on(runtime)
    const tag = `effect-sandbox-daytona-test:${createHash("sha256").update(dockerfile).digest("hex").slice(0, 12)}`
    if (spawnSync("docker", ["image", "inspect", tag], { stdio: "ignore" }).status !== 0) {
      const built = spawnSync("docker", ["build", "-q", "-t", tag, "-"], { input: dockerfile, encoding: "utf8" })
      if (built.status !== 0) throw new Error(`Cannot build ${tag}: ${built.stderr}`)
    }
    return tag
  }).pipe(Effect.provide(ImageBuilder.layer), Effect.provide(DockerEngine.layer))

/** Our snapshot's image for `baseImage`. */
export const snapshotImage = (baseImage: string) => derivedImage(baseImage, (runtime) => snapshotDockerfile(runtime))

/** A stock image with Node on PATH and a home for the sandbox user, without our server or /workspace. */
export const stockNodeImage = (baseImage: string) =>
  derivedImage(baseImage, (runtime) =>
    [
      `FROM ${runtime}`,
      "USER root",
      "RUN ln -s /opt/effect-sandbox/bin/node /usr/local/bin/node && rm -rf /opt/effect-sandbox/payload",
      "USER openhands",
      ""
    ].join("\n"))

/** Our snapshot whose action server prints a line and exits 3 before it listens (a start failure). */
export const dyingServerImage = (baseImage: string) =>
  derivedImage(baseImage, (runtime) =>
    [
      snapshotDockerfile(runtime).trimEnd(),
      "USER root",
      `RUN echo 'console.error("effect-sandbox test: the server gives up at start"); process.exit(3)' ` +
      "> /opt/effect-sandbox/payload/server.mjs",
      "USER openhands",
      ""
    ].join("\n"))
