/**
 * The diff OpenHands attaches to file-edit observations (`get_diff` in `openhands/runtime/utils`):
 * Python's `difflib.unified_diff` over `split('\n')` lines with no context, every line rstripped.
 */
import { type ArrayChange, diffArrays } from "diff"
import { rstrip } from "./python.ts"

/**
 * Beyond this many inserted plus removed lines the exact diff gets slow (Myers is O(N·D)), so
 * the changed middle (between the common head and tail) becomes a single hunk instead.
 */
const MAX_EDIT_LENGTH = 2000

/** A change object like those `diffArrays` returns. */
const changeOf = (value: Array<string>, added: boolean, removed: boolean): ArrayChange<string> => ({
  value,
  added,
  removed,
  count: value.length
})

/** The whole change as one removal and one addition, framed by the common head and tail. */
const coarseChanges = (oldLines: Array<string>, newLines: Array<string>): Array<ArrayChange<string>> => {
  const limit = Math.min(oldLines.length, newLines.length)
  let head = 0
  while (head < limit && oldLines[head] === newLines[head]) head++
  let tail = 0
  while (tail < limit - head && oldLines[oldLines.length - 1 - tail] === newLines[newLines.length - 1 - tail]) tail++
  return [
    changeOf(oldLines.slice(0, head), false, false),
    changeOf(oldLines.slice(head, oldLines.length - tail), false, true),
    changeOf(newLines.slice(head, newLines.length - tail), true, false),
    changeOf(oldLines.slice(oldLines.length - tail), false, false)
  ].filter((c) => c.count > 0)
}

/** difflib's `_format_range_unified`: `start` alone for one line, `start,length` otherwise. */
const formatRange = (start: number, stop: number): string => {
  const length = stop - start
  if (length === 1) return `${start + 1}`
  return `${length === 0 ? start : start + 1},${length}`
}

interface Hunk {
  readonly oldStart: number
  readonly newStart: number
  readonly removed: Array<string>
  readonly added: Array<string>
}

const formatHunk = (hunk: Hunk): Array<string> => [
  `@@ -${formatRange(hunk.oldStart, hunk.oldStart + hunk.removed.length)} +${
    formatRange(hunk.newStart, hunk.newStart + hunk.added.length)
  } @@`,
  ...hunk.removed.map((line) => `-${line}`),
  ...hunk.added.map((line) => `+${line}`)
]

/**
 * `difflib.unified_diff(old.split('\n'), new.split('\n'), fromfile=path, tofile=path, n=0)`
 * with each line rstripped and joined by `\n`; `""` when the texts are equal. With no context,
 * every run of changes between two unchanged lines is its own hunk, its removals before its
 * additions. The hunks come from a Myers diff, which can pair lines differently from difflib's
 * matcher when a change is ambiguous.
 */
export const unifiedDiff = (oldText: string, newText: string, path: string): string => {
  const oldLines = oldText.split("\n")
  const newLines = newText.split("\n")
  const changes = diffArrays(oldLines, newLines, { maxEditLength: MAX_EDIT_LENGTH }) ??
    coarseChanges(oldLines, newLines)
  const hunks: Array<Hunk> = []
  let current: Hunk | undefined
  let oldIndex = 0
  let newIndex = 0
  for (const change of changes) {
    if (!change.added && !change.removed) {
      current = undefined
      oldIndex += change.count
      newIndex += change.count
      continue
    }
    if (current === undefined) {
      current = { oldStart: oldIndex, newStart: newIndex, removed: [], added: [] }
      hunks.push(current)
    }
    for (const line of change.value) (change.added ? current.added : current.removed).push(line)
    if (change.added) newIndex += change.count
    else oldIndex += change.count
  }
  if (hunks.length === 0) return ""
  return [`--- ${path}`, `+++ ${path}`, ...hunks.flatMap(formatHunk)].map(rstrip).join("\n")
}
