/**
 * Where the action-server payload is on this machine (scripts/build-payload.ts makes it), for
 * every provisioner that carries it into a sandbox: the Docker image builder copies it into the
 * runtime image, E2BRuntime uploads it into a template that lacks it. Running from source it is
 * rebuilt once per process, so sandboxes always carry the current code; an installed package
 * ships it built.
 */
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { RuntimeStartError } from "../schema/errors.ts"

/** `payload/manifest.json`: its files (relative paths) and a content hash (what image tags are made of). */
export interface PayloadManifest {
  readonly hash: string
  readonly files: ReadonlyArray<string>
}

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const fromSource = import.meta.url.endsWith(".ts")

let payloadBuilt = false

/** The payload directory, built first when running from source. */
export const payloadDirectory: Effect.Effect<string, RuntimeStartError> = Effect.suspend(() => {
  const packageRoot = fromSource ? root : join(root, "..")
  const dir = join(packageRoot, "payload")
  if (fromSource && !payloadBuilt) {
    const result = spawnSync(process.execPath, [join(packageRoot, "scripts", "build-payload.ts")], { encoding: "utf8" })
    if (result.status !== 0) {
      return Effect.fail(new RuntimeStartError({ message: `Cannot build the server payload: ${result.stderr}` }))
    }
    payloadBuilt = true
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

/** The payload's manifest. */
export const readManifest = (dir: string): PayloadManifest =>
  JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as PayloadManifest
