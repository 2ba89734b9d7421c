/**
 * The TypeScript blocks of the documentation (README.md and docs/**\/*.md), so that a test can
 * type-check each against the package. A block that is deliberately a fragment (a line of an
 * effect, a call whose setting is elsewhere) says so in its fence: ```ts fragment.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"

export interface CodeBlock {
  /** The document, relative to the repository. */
  readonly doc: string
  /** The line of the document where the code starts (the line after the fence), from 1. */
  readonly line: number
  readonly code: string
  /** Marked `fragment`: not meant to compile on its own. */
  readonly fragment: boolean
}

const FENCE = /^(\s*)```(ts|typescript)\b(.*)$/

/** The markdown files the documentation is: README.md and every file under docs/. */
export const documents = (root: string): Array<string> => {
  const walk = (dir: string): Array<string> =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith(".md") ? [join(dir, entry.name)] : []
    )
  return [join(root, "README.md"), ...walk(join(root, "docs"))].sort()
}

/** Every ```ts / ```typescript block of a markdown text (an indented one loses its indentation). */
export const codeBlocks = (root: string, path: string): Array<CodeBlock> => {
  const lines = readFileSync(path, "utf8").split("\n")
  const blocks: Array<CodeBlock> = []
  for (let i = 0; i < lines.length; i++) {
    const fence = FENCE.exec(lines[i]!)
    if (fence === null) continue
    const indent = fence[1]!
    const end = lines.findIndex((line, j) => j > i && line.trim() === "```")
    if (end === -1) throw new Error(`${relative(root, path)}:${i + 1}: a code block that never ends`)
    blocks.push({
      doc: relative(root, path),
      line: i + 2,
      code: lines.slice(i + 1, end).map((line) => line.startsWith(indent) ? line.slice(indent.length) : line).join(
        "\n"
      ),
      fragment: fence[3]!.split(/\s+/).includes("fragment")
    })
    i = end
  }
  return blocks
}
