/**
 * Documentation that compiles: every ```ts block of README.md and docs/ is type-checked against the
 * package (its entries by their published names: `effect-sandbox`, `effect-sandbox/docker`, ...)
 * with the project's strict settings, each block a module of its own. A block that is deliberately a
 * fragment says so (```ts fragment) and is not checked; a failure names the document and its line.
 */
import { assert, describe, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { type CodeBlock, codeBlocks, documents } from "./codeBlocks.ts"

const root = resolve(import.meta.dirname, "..", "..")

/** The package's entries by their published names, as package.json "exports" maps them to dist/. */
const paths = (): Record<string, Array<string>> => {
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    readonly exports: Record<string, string | { readonly default?: string }>
  }
  return Object.fromEntries(
    Object.entries(manifest.exports).flatMap(([subpath, target]) => {
      const built = typeof target === "string" ? target : target.default
      if (built === undefined || !built.startsWith("./dist/src/")) return []
      const source = built.replace("./dist/src/", "./src/").replace(/\.js$/, ".ts")
      return [[subpath === "." ? "effect-sandbox" : `effect-sandbox/${subpath.slice(2)}`, [join(root, source)]]]
    })
  )
}

/** The file name a block is checked under: its document and line, readable in a diagnostic. */
const fileOf = (block: CodeBlock) => `${block.doc.replace(/[/.]/g, "_")}_L${block.line}.ts`

/** tsc's diagnostics, each moved to the document and line of the block it is in. */
const typeCheck = (blocks: ReadonlyArray<CodeBlock>): Array<string> => {
  const dir = mkdtempSync(join(root, ".doc-blocks-"))
  try {
    const byFile = new Map(blocks.map((block) => [fileOf(block), block]))
    for (const [file, block] of byFile) writeFileSync(join(dir, file), block.code + "\n")
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        extends: "../tsconfig.json",
        // A snippet may name what it does not use; everything else is the project's strictness.
        compilerOptions: {
          noEmit: true,
          noUnusedLocals: false,
          noUnusedParameters: false,
          rootDir: root,
          paths: paths()
        },
        include: ["*.ts"]
      })
    )
    try {
      execFileSync(join(root, "node_modules", ".bin", "tsc"), ["-p", dir], { encoding: "utf8", stdio: "pipe" })
      return []
    } catch (error) {
      const { stdout } = error as { readonly stdout: string }
      return stdout.split("\n").filter((line) => line.trim() !== "").map((line) => {
        const at = /^(?:.*\/)?([^/(]+\.ts)\((\d+),(\d+)\): (.*)$/.exec(line)
        const block = at === null ? undefined : byFile.get(at[1]!)
        return block === undefined ? line : `${block.doc}:${block.line + Number(at![2]) - 1}:${at![3]}: ${at![4]}`
      })
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

describe("documentation", () => {
  const blocks = documents(root).flatMap((doc) => codeBlocks(root, doc))

  it("has TypeScript blocks in the README and the docs, a few marked as fragments", () => {
    assert.isAbove(blocks.filter((block) => !block.fragment).length, 20)
    assert.isTrue(blocks.some((block) => block.doc === "README.md" && !block.fragment))
  })

  it("every TypeScript block not marked `fragment` type-checks against the package", () => {
    assert.deepStrictEqual(typeCheck(blocks.filter((block) => !block.fragment)), [])
  }, 180_000)
})
