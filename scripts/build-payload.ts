/**
 * `npm run build:payload`: the action server as a payload that runs wherever a
 * Node >= 22.19 binary runs (containers, pods, VMs):
 *
 *   payload/server.mjs                       the entry point: V8's compile cache on, then the server
 *   payload/server-main.mjs                  the server: what it loads before it listens
 *   payload/editor.mjs                       the file editor agent_skills' `file_editor` runs
 *   payload/egress-proxy.mjs                 a restricted sandbox's gateway: port forwards, egress proxy
 *   payload/lazy-<hash>.mjs                  what either imports on first use (MCP, pdf/docx
 *                                            converters, Turndown, ...): never read at boot
 *   payload/python/effect_sandbox_skills/    the agent_skills Python helpers
 *   payload/node_modules/<native>/           native addons with their runtime files only
 *                                            (node-pty; zeromq and its loader, cmake-ts),
 *                                            playwright-core, and pdf.js for the file viewer
 *   payload/manifest.json                    file list and a content hash (image builders tag by it)
 *
 * Start it with `node payload/server.mjs <port> --working-dir /workspace ...`.
 *
 * A payload whose inputs have not changed since it was built is left as it is (`--force` builds it
 * anyway; `--check` only says whether it is up to date, by its exit code): every test process that
 * starts a runtime from source asks for the payload (src/serverStart/payload.ts), and a build costs
 * seconds of CPU where the check costs milliseconds.
 */
import { createHash } from "node:crypto"
import {
  cpSync,
  existsSync,
  globSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync
} from "node:fs"
import { join, relative } from "node:path"
import type { Plugin } from "rolldown"
import { lazyWs } from "./lazyWs.ts"
import { requireBuiltins } from "./requireBuiltins.ts"

const root = join(import.meta.dirname, "..")
const payload = join(root, "payload")
const started = performance.now()

/**
 * Packages that load files by paths relative to themselves (native addons; Playwright's
 * injected scripts and driver): kept out of the bundle and copied with just the files
 * they load at run time.
 */
const NATIVE: Readonly<Record<string, ReadonlyArray<string>>> = {
  "node-pty": ["package.json", "lib/**/*.js", "build/Release/pty.node"],
  zeromq: ["package.json", "lib/**/*.js", "build/manifest.json", `build/${process.platform}/${process.arch}/**/*.node`],
  "cmake-ts": ["package.json", "build/loader.js"],
  // Without the trace viewer's web app (lib/vite) and the CLI tools: the server only drives Chromium.
  "playwright-core": [
    "package.json",
    "index.js",
    "index.mjs",
    "browsers.json",
    "lib/*.js",
    "lib/server/**/*",
    "lib/entry/**/*"
  ],
  // Not imported: the file viewer serves these two scripts to the browser (src/server/fileViewer).
  "pdfjs-dist": ["package.json", "build/pdf.min.mjs", "build/pdf.worker.min.mjs"]
}

/** A native package's runtime files, relative to its directory in node_modules. */
const nativeFiles = (name: string): Array<string> => {
  const from = join(root, "node_modules", name)
  return globSync([...NATIVE[name]!], { cwd: from, exclude: ["**/*.test.js"], withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(from, join(entry.parentPath, entry.name)))
    .sort()
}

/** The build's own code, beside the sources it bundles. */
const BUILD_FILES = ["scripts/build-payload.ts", "scripts/lazyWs.ts", "scripts/requireBuiltins.ts"]

/**
 * A digest of everything the payload is made from: the sources (src/, the Python helpers among
 * them), the build's own code, the locked versions of the bundled packages (package-lock.json), and
 * the native packages' files that the copy names literally, by size and time (node-pty is compiled
 * at install, so a rebuild changes its binary but not the lock). Read with `readdirSync`, not
 * `globSync`, which took ten times as long.
 */
const inputsDigest = (): string => {
  const hash = createHash("sha256").update(`${process.platform}-${process.arch}\0`)
  const sources = readdirSync(join(root, "src"), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !entry.parentPath.includes("__pycache__"))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
  for (const file of [...sources.sort(), ...BUILD_FILES, "package.json", "package-lock.json"]) {
    hash.update(file).update("\0").update(readFileSync(join(root, file))).update("\0")
  }
  for (const [name, patterns] of Object.entries(NATIVE)) {
    for (const file of patterns.filter((pattern) => !pattern.includes("*"))) {
      const { size, mtimeMs } = statSync(join(root, "node_modules", name, file))
      hash.update(`${name}/${file}\0${size}\0${mtimeMs}\0`)
    }
  }
  return hash.digest("hex")
}

/** Whether payload/ was built from `inputs` and still holds every file its manifest lists. */
const upToDate = (inputs: string): boolean => {
  try {
    const manifest = JSON.parse(readFileSync(join(payload, "manifest.json"), "utf8")) as {
      readonly inputs?: string
      readonly files: ReadonlyArray<string>
    }
    return manifest.inputs === inputs && manifest.files.every((file) => existsSync(join(payload, file)))
  } catch {
    return false
  }
}

const inputs = inputsDigest()
const current = upToDate(inputs)
if (process.argv.includes("--check")) {
  console.log(current ? "payload/: up to date" : "payload/: stale")
  process.exit(current ? 0 : 1)
}
if (current && !process.argv.includes("--force")) {
  console.log(`payload/: up to date (checked in ${(performance.now() - started).toFixed(0)} ms)`)
  process.exit(0)
}
// Loaded only for a build: the bundler's import alone costs more than the check.
const { rolldown } = await import("rolldown")

/**
 * Built beside the payload, then swapped in by two renames: whoever reads the payload
 * meanwhile (an image build in a running test while `npm pack` runs `prepare`) never
 * finds it missing or half-written.
 */
const out = join(root, `payload.next-${process.pid}`)
rmSync(out, { recursive: true, force: true })
mkdirSync(out, { recursive: true })

const ENTRIES = {
  // The entry point: it turns V8's compile cache on, then imports the server (src/server/main.ts).
  "server.mjs": "src/server/main.ts",
  "server-main.mjs": "src/server/serverMain.ts",
  "editor.mjs": "src/executor/skills/editorMain.ts",
  // The gateway of a sandbox with a network policy (src/network/gatewayMain.ts, docs/network.md).
  "egress-proxy.mjs": "src/network/gatewayMain.ts"
}
/**
 * The entry point's import of the server is left to the server's own bundle (server-main.mjs): built
 * as a chunk of the entry's, the server's modules were split into a dozen chunks by what its lazy
 * imports share, and a boot read and linked them all.
 */
const serverMainApart: Plugin = {
  name: "server-main-apart",
  resolveId: (source, importer) =>
    source === "./serverMain.ts" && importer === join(root, ENTRIES["server.mjs"])
      ? { id: "./server-main.mjs", external: true }
      : null
}

for (const [file, input] of Object.entries(ENTRIES)) {
  const bundle = await rolldown({
    input: join(root, input),
    platform: "node",
    // Built-ins are required, not imported (requireBuiltins.ts); node:module, which requires them, stays external.
    external: [...Object.keys(NATIVE), "module", "node:module"],
    plugins: [lazyWs(), requireBuiltins(), serverMainApart],
    logLevel: "warn",
    // A dynamic import of a module the entry also imports statically stays in the entry: nothing lost.
    checks: { ineffectiveDynamicImport: false }
  })
  // What is imported lazily goes into chunks of its own, beside the entry (so `import.meta.dirname`
  // is payload/ in every chunk): the server neither reads nor parses them before it listens, which
  // halved an idle server's heap (the pdf reader alone is 1.6 MB of code). Named by content hash,
  // the two entries' chunks share the directory without clashing.
  await bundle.write({
    dir: out,
    entryFileNames: file,
    chunkFileNames: "lazy-[hash].mjs",
    format: "esm",
    // Escaped, the source is one-byte: V8 keeps a module's source with its code, and a single
    // non-ASCII character makes all of it two-byte (the server's 450 KB took 850 KB of heap).
    charset: "ascii",
    minify: true,
    sourcemap: false
  })
  await bundle.close()
}
// Found beside the bundled server at run time (src/executor/skills/agentSkills.ts).
cpSync(join(root, "src/executor/skills/python"), join(out, "python"), {
  recursive: true,
  filter: (source) => !source.includes("__pycache__")
})

// Runtime files only: no sources, tests or build intermediates.
for (const name of Object.keys(NATIVE)) {
  for (const file of nativeFiles(name)) {
    cpSync(join(root, "node_modules", name, file), join(out, "node_modules", name, file))
  }
}

const files = globSync("**/*", { cwd: out, withFileTypes: true })
  .filter((entry) => entry.isFile())
  .map((entry) => relative(out, join(entry.parentPath, entry.name)))
  .sort()
const hash = createHash("sha256")
for (const file of files) hash.update(file).update("\0").update(readFileSync(join(out, file)))
const bytes = files.reduce((sum, file) => sum + statSync(join(out, file)).size, 0)
writeFileSync(
  join(out, "manifest.json"),
  JSON.stringify({ hash: hash.digest("hex"), node: ">=22.19", entry: "server.mjs", files, inputs }, null, 2) + "\n"
)
const old = join(root, `payload.old-${process.pid}`)
try {
  renameSync(payload, old)
} catch {
  // No payload yet.
}
try {
  renameSync(out, payload)
} catch (error) {
  // Another process's build of the same sources swapped its payload in between our two renames
  // (test files side by side after a source change, each starting a server): theirs stands.
  rmSync(out, { recursive: true, force: true })
  if (!upToDate(inputs)) throw error
}
rmSync(old, { recursive: true, force: true })
console.log(
  `payload/: ${files.length} files, ${(bytes / 1024).toFixed(0)} KiB, built in ${
    (performance.now() - started).toFixed(0)
  } ms`
)
