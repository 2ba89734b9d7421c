/**
 * The action server's payload (server.mjs, its native addons and Python helpers, listed in
 * manifest.json), as runtimes ship it into a sandbox: baked into Docker's runtime image
 * (runtimeImage/imageContext.ts, for engines/docker/imageBuilder.ts and the runtime API's /build), or
 * uploaded at start into a cloud sandbox whose image has only a Node (hosted/serverFiles.ts).
 */
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { RuntimeStartError } from "../schema/errors.ts"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const fromSource = import.meta.url.endsWith(".ts")

/** Whether this process has run the build script (which builds only when the sources changed). */
let payloadChecked = false
/**
 * The payload directory. Running from source, the build script is run once per process, so
 * images always carry the current code; it rebuilds only when the sources changed since the last
 * build (a check of milliseconds where a build takes seconds). An installed package ships it built.
 */
export const payloadDirectory = Effect.suspend(() => {
  const packageRoot = fromSource ? root : join(root, "..")
  const dir = join(packageRoot, "payload")
  if (fromSource && !payloadChecked) {
    const result = spawnSync(process.execPath, [join(packageRoot, "scripts", "build-payload.ts")], { encoding: "utf8" })
    if (result.status !== 0) {
      return Effect.fail(new RuntimeStartError({ message: `Cannot build the server payload: ${result.stderr}` }))
    }
    payloadChecked = true
  }
  return existsSync(join(dir, "manifest.json"))
    ? Effect.succeed(dir)
    : Effect.fail(
      new RuntimeStartError({
        message:
          `The server payload is missing at ${dir}: reinstall effect-sandbox (its package ships the payload), or in a checkout run \`npm run build\`.`
      })
    )
})

/** The payload's manifest: its hash, the Node versions it runs on, its files (relative to its directory). */
export interface Manifest {
  readonly hash: string
  readonly node: string
  readonly files: ReadonlyArray<string>
}

export const readManifest = (directory: string): Manifest =>
  JSON.parse(readFileSync(join(directory, "manifest.json"), "utf8"))

/** The payload directory and its manifest. */
export const serverPayload = Effect.map(payloadDirectory, (directory) => ({
  directory,
  manifest: readManifest(directory)
}))
