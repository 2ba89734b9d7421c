/**
 * The runtime image the real-cluster tests run, built (or found) on the Docker engine as
 * KubernetesRuntime would build it: the tools image (`scripts/base-image.sh tools`: IPython,
 * Chromium, code-server) with our server, for the runtime's default sandbox user. Prints its tag,
 * which `cluster.sh import` then copies into the cluster's containerd (the cluster has no registry).
 *   node scripts/kubernetes/runtime-image.ts
 */
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { DockerEngine, ImageBuilder } from "../../src/docker.ts"
import { DEFAULT_SANDBOX_UID, DEFAULT_SANDBOX_USERNAME } from "../../src/runtimeImage/sandboxUser.ts"

// Stdout carries the tag alone (the caller captures it): the build's log lines go to stderr.
const printTag = (tag: string) => process.stdout.write(`${tag}\n`)
console.log = console.error

const tools = spawnSync(join(import.meta.dirname, "..", "base-image.sh"), ["tools"], {
  encoding: "utf8",
  stdio: ["ignore", "pipe", "inherit"]
})
if (tools.status !== 0) throw new Error("scripts/base-image.sh tools failed (above)")
const baseImage = tools.stdout.trim().split("\n").at(-1)!

const tag = await Effect.runPromise(
  Effect.gen(function*() {
    return yield* (yield* ImageBuilder).ensure({
      baseImage,
      userId: DEFAULT_SANDBOX_UID,
      username: DEFAULT_SANDBOX_USERNAME
    })
  }).pipe(Effect.provide(ImageBuilder.layer), Effect.provide(DockerEngine.layer))
)
printTag(tag)
