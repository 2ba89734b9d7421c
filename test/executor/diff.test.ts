import { assert, describe, it } from "@effect/vitest"
import { unifiedDiff } from "../../src/executor/editor/OHEditor.ts"

// Expected values are Python's `get_diff` (difflib.unified_diff, n=0, rstripped lines).
describe("unifiedDiff", () => {
  const cases: ReadonlyArray<readonly [name: string, oldText: string, newText: string, expected: string]> = [
    ["spec example", "a\nb\nc", "a\nB\nc", "--- /x/f.txt\n+++ /x/f.txt\n@@ -2 +2 @@\n-b\n+B"],
    ["equal texts", "same", "same", ""],
    ["both empty", "", "", ""],
    ["append a line", "a\nb\nc\n", "a\nb\nc\nd\n", "--- /x/f.txt\n+++ /x/f.txt\n@@ -3,0 +4 @@\n+d"],
    ["from empty", "", "hello", "--- /x/f.txt\n+++ /x/f.txt\n@@ -1 +1 @@\n-\n+hello"],
    ["to empty", "hello\n", "", "--- /x/f.txt\n+++ /x/f.txt\n@@ -1 +0,0 @@\n-hello"],
    ["new file with lines", "", "x\ny\n", "--- /x/f.txt\n+++ /x/f.txt\n@@ -0,0 +1,2 @@\n+x\n+y"],
    ["pure deletion", "1\n2\n3\n4", "1\n4", "--- /x/f.txt\n+++ /x/f.txt\n@@ -2,2 +1,0 @@\n-2\n-3"],
    [
      "separate hunks without context",
      "a\nb\nc\nd\ne",
      "a\nc\nd\nX\nY\ne",
      "--- /x/f.txt\n+++ /x/f.txt\n@@ -2 +1,0 @@\n-b\n@@ -4,0 +4,2 @@\n+X\n+Y"
    ],
    [
      "three hunks",
      "a\nb\nc\nd\ne\nf",
      "b\nc\nz\ne\nf\ng",
      "--- /x/f.txt\n+++ /x/f.txt\n@@ -1 +0,0 @@\n-a\n@@ -4 +3 @@\n-d\n+z\n@@ -6,0 +6 @@\n+g"
    ],
    ["lines are rstripped", "x  \ny", "x\ny", "--- /x/f.txt\n+++ /x/f.txt\n@@ -1 +1 @@\n-x\n+x"]
  ]
  for (const [name, oldText, newText, expected] of cases) {
    it(name, () => assert.strictEqual(unifiedDiff(oldText, newText, "/x/f.txt"), expected))
  }

  it("falls back to one hunk around the changed middle when the edit is large", () => {
    const before = Array.from({ length: 3000 }, (_, i) => `line ${i}`)
    const after = before.map((line, i) => i === 0 || i === 2999 ? line : `${line}!`)
    const diff = unifiedDiff(before.join("\n"), after.join("\n"), "/big")
    const lines = diff.split("\n")
    assert.strictEqual(lines[2], "@@ -2,2998 +2,2998 @@")
    assert.strictEqual(lines[3], "-line 1")
    assert.strictEqual(lines[3 + 2998], "+line 1!")
    assert.strictEqual(lines.length, 3 + 2 * 2998)
  })
})
