/**
 * A session in a Docker container: `npm run example:docker` (needs a running
 * engine; the base image is made from nothing on first use, ~35 s, then cached). npm scripts run
 * on the Node 24 of the dev dependencies; `node examples/docker.ts` needs a Node that runs
 * TypeScript itself (22.18 or later), which the system's may not be.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Stream } from "effect"
import { execFileSync } from "node:child_process"
import { join } from "node:path"
import { DockerRuntime } from "../src/docker.ts"
import { CmdRunAction, FileEditAction, Runtime } from "../src/index.ts"

const baseImage = process.env["EFFECT_SANDBOX_BASE_IMAGE"] ??
  execFileSync(join(import.meta.dirname, "..", "scripts", "base-image.sh"), { encoding: "utf8" }).trim().split("\n").at(
    -1
  )!

const program = Effect.gen(function*() {
  const rt = yield* Runtime
  yield* Console.log(`status so far: ${(yield* rt.status.pipe(Stream.take(3), Stream.runCollect)).join(" → ")}`)
  yield* Console.log(`container session ${rt.info.id}, server ${rt.info.urls["actionServer"]}`)

  const who = yield* rt.runCommand("id && uname -sr && cat /etc/debian_version")
  yield* Console.log(`\n$ id && uname -sr && cat /etc/debian_version\n${who.content}`)

  yield* rt.edit(
    new FileEditAction({ path: "/workspace/app.sh", command: "create", fileText: "echo hello from $(hostname)\n" })
  )
  const run = yield* rt.runCommand(new CmdRunAction({ command: "bash /workspace/app.sh" }))
  yield* Console.log(`\n$ bash /workspace/app.sh\n${run.content}`)

  yield* rt.pause
  yield* Console.log("\npaused (docker pause); resuming...")
  yield* rt.resume
  yield* Console.log(`after resume: ${(yield* rt.runCommand("cat /workspace/app.sh")).content}`)
}).pipe(Effect.scoped)

program.pipe(Effect.provide(DockerRuntime.layer({ baseImage })), NodeRuntime.runMain)
