/**
 * `npm run build:payload`: the action server as a payload that runs wherever a
 * Node >= 22.19 binary runs (containers, pods, VMs):
 *
 *   payload/server.mjs                       the server, bundled into one file
 *   payload/node_modules/node-pty/           its native addon (lib + build/Release/pty.node)
 *   payload/manifest.json                    file list and a content hash (image builders tag by it)
 *
 * Start it with `node payload/server.mjs <port> --working-dir /workspace ...`.
 */
import { createHash } from "node:crypto"
import { cpSync, globSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { builtinModules } from "node:module"
import { join, relative } from "node:path"
import { rolldown } from "rolldown"

const root = join(import.meta.dirname, "..")
const out = join(root, "payload")
const started = performance.now()

rmSync(out, { recursive: true, force: true })
mkdirSync(out, { recursive: true })

const bundle = await rolldown({
  input: join(root, "src/server/main.ts"),
  platform: "node",
  external: ["node-pty", ...builtinModules, ...builtinModules.map((m) => `node:${m}`)],
  logLevel: "warn"
})
await bundle.write({ file: join(out, "server.mjs"), format: "esm", minify: true, sourcemap: false })
await bundle.close()

// node-pty's runtime files only: no sources, tests or build intermediates.
const pty = join(root, "node_modules/node-pty")
const ptyOut = join(out, "node_modules/node-pty")
cpSync(join(pty, "package.json"), join(ptyOut, "package.json"))
for (const file of globSync("lib/**/*.js", { cwd: pty, exclude: ["lib/**/*.test.js"] })) {
  cpSync(join(pty, file), join(ptyOut, file))
}
cpSync(join(pty, "build/Release/pty.node"), join(ptyOut, "build/Release/pty.node"))

const files = globSync("**/*", { cwd: out, withFileTypes: true })
  .filter((entry) => entry.isFile())
  .map((entry) => relative(out, join(entry.parentPath, entry.name)))
  .sort()
const hash = createHash("sha256")
for (const file of files) hash.update(file).update("\0").update(readFileSync(join(out, file)))
const bytes = files.reduce((sum, file) => sum + statSync(join(out, file)).size, 0)
writeFileSync(
  join(out, "manifest.json"),
  JSON.stringify({ hash: hash.digest("hex"), node: ">=22.19", entry: "server.mjs", files }, null, 2) + "\n"
)
console.log(
  `payload/: ${files.length} files, ${(bytes / 1024).toFixed(0)} KiB, built in ${
    (performance.now() - started).toFixed(0)
  } ms`
)
