/**
 * The hint OpenHands adds when a draft edit's range is too long (`openhands/utils/chunk_localizer.py`):
 * the file cut into 20-line chunks, ranked by how much of each chunk the draft covers (character
 * LCS divided by the chunk's length), best first, ties in file order.
 */
import { pythonFloat } from "../executor/shell/messages.ts"

export interface Snippet {
  readonly text: string
  /** 1-based, inclusive. */
  readonly start: number
  readonly end: number
  readonly similarity: number
}

/** Length of the longest common subsequence of two strings (one DP row, O(a·b) time). */
const lcsLength = (a: string, b: string): number => {
  const row = new Uint32Array(b.length + 1)
  for (let i = 0; i < a.length; i++) {
    let diagonal = 0
    for (let j = 0; j < b.length; j++) {
      const above = row[j + 1]!
      row[j + 1] = a.charCodeAt(i) === b.charCodeAt(j) ? diagonal + 1 : Math.max(above, row[j]!)
      diagonal = above
    }
  }
  return row[b.length]!
}

/** The `k` chunks of `text` (of `size` lines) most covered by `query`. */
export const similarSnippets = (text: string, query: string, k = 3, size = 20): Array<Snippet> => {
  const lines = text.split("\n")
  const chunks: Array<Snippet> = []
  for (let i = 0; i < lines.length; i += size) {
    const chunk = lines.slice(i, i + size).join("\n")
    chunks.push({
      text: chunk,
      start: i + 1,
      end: i + Math.min(size, lines.length - i),
      similarity: chunk.length === 0 ? 0 : lcsLength(chunk, query) / chunk.length
    })
  }
  // Array.prototype.sort is stable, as Python's sorted(reverse=True) is for equal keys.
  return chunks.sort((a, b) => b.similarity - a.similarity).slice(0, k)
}

/** `Chunk.visualize()`: each line prefixed with its number and `|`. */
export const visualizeSnippet = (snippet: Snippet): string =>
  snippet.text.split("\n").map((line, i) => `${snippet.start + i}|${line}\n`).join("")

/** Python's `repr(float)`: `1.0`, `0.25`, and exponent form below 1e-4 (`1e-05`). */
export const pythonFloatRepr = (n: number): string =>
  n !== 0 && Math.abs(n) < 1e-4 ? n.toExponential().replace(/e([+-])(\d)$/, "e$10$2") : pythonFloat(n)
