/**
 * `bench/reliability.json`, the committed record of the chaos suite: always every group's rows.
 * Each row names the group that measured it, so a run of some groups replaces only theirs and
 * the record never shrinks to the few groups a developer last ran.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import type { Row } from "./rows.ts"

/** A row as the record holds it: with its group (a group's rows do not share one name prefix). */
export interface RecordRow extends Row {
  readonly group: string
}

/**
 * The record after a run: each group that ran replaces all its rows (its set of rows may have
 * changed), every other group keeps its rows, and the rows follow `order` (the suite's groups) so
 * that a merge touches only the lines of the groups that ran. Rows of a group no longer in
 * `order` are dropped: nothing could ever refresh them. With every group run this is `ran`.
 */
export const mergeRecord = (
  existing: ReadonlyArray<RecordRow>,
  ran: ReadonlyArray<RecordRow>,
  groupsRun: ReadonlyArray<string>,
  order: ReadonlyArray<string>
): ReadonlyArray<RecordRow> => {
  const rows = [...existing.filter((row) => !groupsRun.includes(row.group)), ...ran]
  return order.flatMap((group) => rows.filter((row) => row.group === group))
}

/** The record's rows; none if there is no file yet. A row without a group cannot be merged: rerun the suite. */
export const readRecord = (path: string): ReadonlyArray<RecordRow> => {
  if (!existsSync(path)) return []
  const rows = JSON.parse(readFileSync(path, "utf8")) as ReadonlyArray<Partial<RecordRow>>
  const index = rows.findIndex((row) => typeof row.group !== "string")
  if (index >= 0) {
    throw new Error(`${path}: row ${index + 1} names no group; run the whole suite (npm run chaos) to rewrite it`)
  }
  return rows as ReadonlyArray<RecordRow>
}

export const writeRecord = (path: string, rows: ReadonlyArray<RecordRow>) =>
  writeFileSync(path, JSON.stringify(rows, null, 2) + "\n")
