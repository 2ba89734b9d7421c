/**
 * code-server on this machine, for runtimes that run it here (LocalRuntime): the tools image's
 * `/opt/code-server`, copied out once into `.tmp/code-server/<image id>/` and reused while the image
 * is the same (a copy is ~600 MB, ~20 s). It runs on the host because the image is built for that:
 * its native modules were compiled against the Node that runs the tests (Node-API), on Debian
 * bookworm, whose glibc the host has too. A new image id replaces the old copy.
 */
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import { codeServerEntry } from "../../src/server/vscode/codeServer.ts"
import { toolsImage } from "../docker/infra.ts"

const CACHE = join(import.meta.dirname, "..", "..", ".tmp", "code-server")

const docker = (...args: Array<string>) =>
  Effect.promise(() => promisify(execFile)("docker", args, { encoding: "utf8" })).pipe(
    Effect.map(({ stdout }) => stdout.trim())
  )

/** `/opt/code-server` of `image` copied into `into` through a created (never started) container, removed after. */
const copyOut = (image: string, into: string) =>
  Effect.acquireUseRelease(
    docker("create", "--label", "effect-sandbox.test=code-server-copy", image),
    (container) => docker("cp", `${container}:/opt/code-server/.`, into),
    (container) => docker("rm", "-f", container)
  )

/** The package directory of the tools image's code-server, copied here the first time. */
export const hostCodeServer = Effect.gen(function*() {
  const image = toolsImage()
  const id = (yield* docker("image", "inspect", "--format", "{{.Id}}", image)).replace(/^sha256:/, "").slice(0, 12)
  const dir = join(CACHE, id)
  const pkg = join(dir, "node_modules", "code-server")
  if (existsSync(codeServerEntry(pkg))) return pkg
  mkdirSync(CACHE, { recursive: true })
  // Older images' copies and a copy cut short go; the new one appears whole or not at all.
  for (const entry of readdirSync(CACHE)) rmSync(join(CACHE, entry), { recursive: true, force: true })
  const partial = mkdtempSync(join(CACHE, ".partial-"))
  yield* copyOut(image, partial).pipe(Effect.onError(() => Effect.sync(() => rmSync(partial, { recursive: true }))))
  renameSync(partial, dir)
  return pkg
})
