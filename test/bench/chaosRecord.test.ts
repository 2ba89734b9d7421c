import { assert, describe, it } from "@effect/vitest"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { mergeRecord, readRecord, type RecordRow, writeRecord } from "../../bench/chaos/record.ts"

const row = (group: string, name: string, value = 0): RecordRow => ({
  group,
  name: `${group}: ${name}`,
  value,
  unit: "things",
  target: "0",
  pass: value === 0
})

const ORDER = ["fuzz", "escapes", "secrets"]
const RECORD = [row("fuzz", "a"), row("fuzz", "b"), row("escapes", "c"), row("secrets", "d")]
const names = (rows: ReadonlyArray<RecordRow>) => rows.map((r) => `${r.name}=${r.value}`)

describe("the chaos record (bench/reliability.json)", () => {
  it("a run of some groups replaces all their rows and keeps the others, in the suite's order", () => {
    // escapes now measures one row more and fuzz one row less than the record holds.
    const ran = [row("fuzz", "a", 3), row("escapes", "c", 1), row("escapes", "e", 2)]
    assert.deepStrictEqual(names(mergeRecord(RECORD, ran, ["escapes", "fuzz"], ORDER)), [
      "fuzz: a=3",
      "escapes: c=1",
      "escapes: e=2",
      "secrets: d=0"
    ])
  })

  it("a run of every group is the record, whatever was there", () => {
    const ran = [row("secrets", "x", 1), row("fuzz", "y")]
    assert.deepStrictEqual(names(mergeRecord(RECORD, ran, ORDER, ORDER)), ["fuzz: y=0", "secrets: x=1"])
  })

  it("a group that ran keeps no old rows even if it measured none; a group removed from the suite is dropped", () => {
    const merged = mergeRecord([...RECORD, row("gone", "z")], [], ["secrets"], ORDER)
    assert.deepStrictEqual(names(merged), ["fuzz: a=0", "fuzz: b=0", "escapes: c=0"])
  })

  it("reads what it writes; no file is an empty record; a row without a group is refused", () => {
    const dir = mkdtempSync(join(tmpdir(), "chaos-record-"))
    try {
      const path = join(dir, "reliability.json")
      assert.deepStrictEqual(readRecord(path), [])
      writeRecord(path, RECORD)
      assert.deepStrictEqual(readRecord(path), RECORD)
      assert.isTrue(readFileSync(path, "utf8").startsWith("[\n  {\n    \"group\": \"fuzz\",\n"))
      const { group: _, ...ungrouped } = row("fuzz", "old")
      writeFileSync(path, JSON.stringify([row("fuzz", "a"), ungrouped]))
      assert.throws(
        () => readRecord(path),
        `${path}: row 2 names no group; run the whole suite (npm run chaos) to rewrite it`
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("the committed record holds a row of every group the suite runs, each group's rows together", () => {
    const source = readFileSync(join(import.meta.dirname, "../../bench/chaos/main.ts"), "utf8")
    const suite = [...source.matchAll(/\{ name: "([a-z-]+)", share:/g)].map((m) => m[1]!)
    const record = readRecord(join(import.meta.dirname, "../../bench/reliability.json"))
    assert.deepStrictEqual([...new Set(record.map((r) => r.group))], suite)
    assert.deepStrictEqual(mergeRecord(record, [], [], suite), record)
  })
})
