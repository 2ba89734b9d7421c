/**
 * `npm run format` / `npm run lint` (with --check): dprint's TypeScript plugin,
 * configured by dprint.json, run through @dprint/formatter (wasm). We do not use
 * the dprint CLI: it ships per-platform native packages that a partial registry
 * mirror may lack, which breaks `npm ci`.
 */
import { createFromBuffer } from "@dprint/formatter"
import { getPath } from "@dprint/typescript"
import { globSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"

interface DprintConfig {
  readonly lineWidth: number
  readonly indentWidth: number
  readonly typescript: Record<string, unknown>
  readonly includes: ReadonlyArray<string>
  readonly excludes: ReadonlyArray<string>
}

const root = join(import.meta.dirname, "..")
const config: DprintConfig = JSON.parse(readFileSync(join(root, "dprint.json"), "utf8"))
const formatter = createFromBuffer(readFileSync(getPath()))
formatter.setConfig({ lineWidth: config.lineWidth, indentWidth: config.indentWidth }, config.typescript)

const check = process.argv.includes("--check")
const files = globSync([...config.includes], { cwd: root, exclude: [...config.excludes] })
const unformatted: Array<string> = []
for (const file of files) {
  const path = join(root, file)
  const text = readFileSync(path, "utf8")
  const formatted = formatter.formatText({ filePath: path, fileText: text })
  if (formatted === text) continue
  unformatted.push(file)
  if (!check) writeFileSync(path, formatted)
}
if (check && unformatted.length > 0) {
  console.error(`Not formatted (run \`npm run format\`):\n  ${unformatted.join("\n  ")}`)
  process.exit(1)
}
console.log(`${check ? "checked" : "formatted"} ${files.length} files${check ? "" : `, ${unformatted.length} changed`}`)
