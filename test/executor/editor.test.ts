import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as nodePath from "node:path"
import { type EditorRequest, makeEditor } from "../../src/executor/editor/OHEditor.ts"
import { writeFile } from "../../src/executor/files/fileOps.ts"
import { Workspace } from "../../src/executor/workspace.ts"
import * as documents from "./documentFixtures.ts"

/**
 * A fresh workspace mounted at /workspace (restricted) with its editor; `run` takes the request
 * fields that differ from "all null" and runs from the workspace root. Removed after the test.
 */
const setup = Effect.acquireRelease(
  Effect.promise(async () => {
    const root = await fs.realpath(await fs.mkdtemp(nodePath.join(os.tmpdir(), "editor-test-")))
    const ws = new Workspace({ root, mountPath: "/workspace", restricted: true })
    const editor = makeEditor(ws)
    const run = (req: Partial<EditorRequest> & Pick<EditorRequest, "command" | "path">) =>
      editor.run({ fileText: null, oldStr: null, newStr: null, insertLine: null, viewRange: null, ...req }, root)
    const output = (req: Partial<EditorRequest> & Pick<EditorRequest, "command" | "path">) =>
      Effect.map(run(req), (result) => result.output)
    return { root, ws, run, output }
  }),
  ({ root }) => Effect.promise(() => fs.rm(root, { recursive: true, force: true }))
)

const put = (path: string, content: string | Uint8Array) => Effect.promise(() => fs.writeFile(path, content))
const contentOf = (path: string) => Effect.promise(() => fs.readFile(path, "utf8"))

const REVIEW = "Review the changes and make sure they are as expected. Edit the file again if necessary."
const REVIEW_INSERT =
  "Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary."
const twentyLines = Array.from({ length: 20 }, (_, i) => `line ${i + 1}\n`).join("")

describe("OHEditor: observed outputs (spec 6.6)", () => {
  const P = "/workspace/test.txt"
  /** The file as the server's FileWrite creates it (the content gains a final newline). */
  const withTestFile = Effect.gen(function*() {
    const env = yield* setup
    yield* writeFile(env.ws, env.root, {
      path: P,
      content: "This is a test file.\nThis file is for testing purposes.",
      start: 0,
      end: -1
    })
    return env
  })

  it.effect("view", () =>
    Effect.gen(function*() {
      const { run } = yield* withTestFile
      assert.deepStrictEqual(yield* run({ command: "view", path: P }), {
        output:
          `Here's the result of running \`cat -n\` on ${P}:\n     1\tThis is a test file.\n     2\tThis file is for testing purposes.\n     3\t\n`,
        isError: false,
        oldFile: null,
        newFile: null
      })
    }))

  it.effect("view_range", () =>
    Effect.gen(function*() {
      const { output } = yield* withTestFile
      const view = (viewRange: ReadonlyArray<number>) => output({ command: "view", path: P, viewRange })
      assert.strictEqual(
        yield* view([2, 3]),
        `NOTE: We only show up to 2 since there're only 2 lines in this file.\nHere's the result of running \`cat -n\` on ${P}:\n     2\tThis file is for testing purposes.\n`
      )
      assert.strictEqual(
        yield* view([2, -1]),
        `Here's the result of running \`cat -n\` on ${P}:\n     2\tThis file is for testing purposes.\n`
      )
      assert.strictEqual(
        yield* view([0, 2]),
        "ERROR:\nInvalid `view_range` parameter: [0, 2]. Its first element `0` should be within the range of lines of the file: [1, 2]."
      )
      assert.strictEqual(
        yield* view([3, 2]),
        "ERROR:\nInvalid `view_range` parameter: [3, 2]. Its first element `3` should be within the range of lines of the file: [1, 2]."
      )
      assert.strictEqual(
        yield* view([1, 2, 3]),
        "ERROR:\nInvalid `view_range` parameter: [1, 2, 3]. It should be a list of two integers."
      )
      assert.strictEqual(
        yield* view([2, 1]),
        "ERROR:\nInvalid `view_range` parameter: [2, 1]. Its second element `1` should be greater than or equal to the first element `2`."
      )
    }))

  it.effect("str_replace shows a snippet of the edit", () =>
    Effect.gen(function*() {
      const { root, run } = yield* withTestFile
      assert.deepStrictEqual(
        yield* run({ command: "str_replace", path: P, oldStr: "test file", newStr: "sample file" }),
        {
          output:
            `The file ${P} has been edited. Here's the result of running \`cat -n\` on a snippet of ${P}:\n     1\tThis is a sample file.\n     2\tThis file is for testing purposes.\n     3\t\n${REVIEW}`,
          isError: false,
          oldFile: "This is a test file.\nThis file is for testing purposes.\n",
          newFile: "This is a sample file.\nThis file is for testing purposes.\n"
        }
      )
      assert.strictEqual(
        yield* contentOf(`${root}/test.txt`),
        "This is a sample file.\nThis file is for testing purposes.\n"
      )
    }))

  it.effect("str_replace in a 20-line file shows 4 lines around the replacement", () =>
    Effect.gen(function*() {
      const { output, root } = yield* setup
      yield* put(`${root}/twenty.txt`, twentyLines)
      const path = "/workspace/twenty.txt"
      assert.strictEqual(
        yield* output({ command: "str_replace", path, oldStr: "line 10\n", newStr: "new 10a\nnew 10b\n" }),
        `The file ${path} has been edited. Here's the result of running \`cat -n\` on a snippet of ${path}:\n` +
          "     7\tline 7\n     8\tline 8\n     9\tline 9\n    10\tnew 10a\n    11\tnew 10b\n" +
          "    12\tline 11\n    13\tline 12\n    14\tline 13\n    15\tline 14\n    16\tline 15\n    17\t\n" + REVIEW
      )
    }))

  it.effect("insert in a 20-line file", () =>
    Effect.gen(function*() {
      const { root, run } = yield* setup
      yield* put(`${root}/twenty.txt`, twentyLines)
      const path = "/workspace/twenty.txt"
      const result = yield* run({ command: "insert", path, insertLine: 15, newStr: "inserted" })
      assert.strictEqual(
        result.output,
        `The file ${path} has been edited. Here's the result of running \`cat -n\` on a snippet of the edited file:\n` +
          "    12\tline 12\n    13\tline 13\n    14\tline 14\n    15\tline 15\n    16\tinserted\n" +
          "    17\tline 16\n    18\tline 17\n    19\tline 18\n    20\tline 19\n    21\t\n" + REVIEW_INSERT
      )
      assert.strictEqual(result.oldFile, twentyLines)
      assert.strictEqual(result.newFile, twentyLines.replace("line 16\n", "inserted\nline 16\n"))
    }))

  it.effect("empty file", () =>
    Effect.gen(function*() {
      const { output, root } = yield* setup
      yield* put(`${root}/empty.txt`, "")
      const path = "/workspace/empty.txt"
      assert.strictEqual(
        yield* output({ command: "view", path }),
        `Here's the result of running \`cat -n\` on ${path}:\n     1\t\n`
      )
      assert.strictEqual(
        yield* output({ command: "view", path, viewRange: [1, 1] }),
        "ERROR:\nInvalid `view_range` parameter: [1, 1]. Its first element `1` should be within the range of lines of the file: [1, 0]."
      )
    }))

  it.effect("binary and oversized files are refused", () =>
    Effect.gen(function*() {
      const { output, root } = yield* setup
      yield* put(`${root}/data.bin`, Uint8Array.from({ length: 256 }, (_, i) => i))
      yield* put(`${root}/big.txt`, "x".repeat(11 * 1024 * 1024))
      assert.strictEqual(
        yield* output({ command: "view", path: "/workspace/data.bin" }),
        "ERROR:\nFile validation failed for /workspace/data.bin: File appears to be binary and this file type cannot be read or edited by this tool."
      )
      assert.strictEqual(
        yield* output({ command: "str_replace", path: "/workspace/big.txt", oldStr: "x", newStr: "y" }),
        "ERROR:\nFile validation failed for /workspace/big.txt: File is too large (11.0MB). Maximum allowed size is 10MB."
      )
    }))

  it.effect("tabs are preserved", () =>
    Effect.gen(function*() {
      const { output } = yield* setup
      const path = "/workspace/tabs.py"
      assert.strictEqual(
        yield* output({ command: "create", path, fileText: "def test():\n\tprint(\"Hello, World!\")" }),
        `File created successfully at: ${path}`
      )
      assert.strictEqual(
        yield* output({ command: "str_replace", path, oldStr: "Hello, World!", newStr: "Hello, Universe!" }),
        `The file ${path} has been edited. Here's the result of running \`cat -n\` on a snippet of ${path}:\n     1\tdef test():\n     2\t\tprint("Hello, Universe!")\n${REVIEW}`
      )
    }))
})

describe("OHEditor: validation", () => {
  it.effect("relative paths, with a suggestion when the workspace has that path", () =>
    Effect.gen(function*() {
      const { output, root } = yield* setup
      yield* put(`${root}/there.txt`, "x")
      assert.strictEqual(
        yield* output({ command: "view", path: "there.txt" }),
        "ERROR:\nInvalid `path` parameter: there.txt. The path should be an absolute path, starting with `/`. Maybe you meant /workspace/there.txt?"
      )
      assert.strictEqual(
        yield* output({ command: "view", path: "./missing.txt" }),
        "ERROR:\nInvalid `path` parameter: missing.txt. The path should be an absolute path, starting with `/`."
      )
    }))

  it.effect("path and command compatibility, in order", () =>
    Effect.gen(function*() {
      const { output, root } = yield* setup
      yield* put(`${root}/a.txt`, "a\n")
      yield* put(`${root}/doc.PDF`, "%PDF-1.4\n")
      assert.strictEqual(
        yield* output({ command: "create", path: "/workspace/a.txt", fileText: "b" }),
        "ERROR:\nInvalid `path` parameter: /workspace/a.txt. File already exists at: /workspace/a.txt. Cannot overwrite files using command `create`."
      )
      assert.strictEqual(
        yield* output({ command: "str_replace", path: "/workspace/nope.txt", oldStr: "a" }),
        "ERROR:\nInvalid `path` parameter: /workspace/nope.txt. The path /workspace/nope.txt does not exist. Please provide a valid path."
      )
      assert.strictEqual(
        yield* output({ command: "insert", path: "/workspace/", insertLine: 0, newStr: "x" }),
        "ERROR:\nInvalid `path` parameter: /workspace. The path /workspace is a directory and only the `view` command can be used on directories."
      )
      assert.strictEqual(
        yield* output({ command: "undo_edit", path: "/workspace/doc.PDF" }),
        "ERROR:\nInvalid `path` parameter: /workspace/doc.PDF. The path /workspace/doc.PDF points to a binary file (.PDF) and only the `view` command can be used on supported binary files."
      )
      yield* put(`${root}/song.mp3`, "ID3")
      assert.strictEqual(
        yield* output({ command: "view", path: "/workspace/song.mp3" }),
        "ERROR:\nError in converting file to Markdown: conversion to Markdown is not available in this runtime. Please use Python code to read /workspace/song.mp3"
      )
      assert.strictEqual(
        yield* output({ command: "delete", path: "/workspace/a.txt" }),
        "ERROR:\nUnrecognized command delete. The allowed commands for the oh_editor tool are: view, create, str_replace, insert, undo_edit"
      )
    }))

  it.effect("missing and invalid parameters", () =>
    Effect.gen(function*() {
      const { output, root } = yield* setup
      yield* put(`${root}/a.txt`, "a\n")
      const path = "/workspace/a.txt"
      assert.strictEqual(
        yield* output({ command: "create", path: "/workspace/new.txt" }),
        "ERROR:\nParameter `file_text` is required for command: create."
      )
      assert.strictEqual(
        yield* output({ command: "str_replace", path }),
        "ERROR:\nParameter `old_str` is required for command: str_replace."
      )
      assert.strictEqual(
        yield* output({ command: "str_replace", path, oldStr: "a", newStr: "a" }),
        "ERROR:\nInvalid `new_str` parameter: a. No replacement was performed. `new_str` and `old_str` must be different."
      )
      assert.strictEqual(
        yield* output({ command: "insert", path, newStr: "x" }),
        "ERROR:\nParameter `insert_line` is required for command: insert."
      )
      assert.strictEqual(
        yield* output({ command: "insert", path, insertLine: 0 }),
        "ERROR:\nParameter `new_str` is required for command: insert."
      )
      assert.strictEqual(
        yield* output({ command: "insert", path, insertLine: 5, newStr: "x" }),
        "ERROR:\nInvalid `insert_line` parameter: 5. It should be within the range of allowed values: [0, 1]"
      )
      assert.strictEqual(
        yield* output({ command: "view", path, insertLine: "abc" }),
        "ERROR:\nInvalid insert_line value: 'abc'. Expected an integer."
      )
      assert.strictEqual(
        yield* output({ command: "view", path: "/workspace", viewRange: [1, 2] }),
        "ERROR:\nInvalid `view_range` parameter: [1, 2]. The `view_range` parameter is not allowed when `path` points to a directory."
      )
    }))

  it.effect("the workspace boundary", () =>
    Effect.gen(function*() {
      const { output, root, run } = yield* setup
      const result = yield* run({ command: "view", path: "/etc/passwd" })
      assert.deepStrictEqual(result, {
        output: `ERROR:\nInvalid path: /etc/passwd. You can only work with files in ${root}.`,
        isError: true,
        oldFile: null,
        newFile: null
      })
      assert.strictEqual(
        yield* output({ command: "create", path: "/workspace/../outside.txt", fileText: "x" }),
        `ERROR:\nInvalid path traversal: /workspace/../outside.txt. Path resolves outside the workspace. Resolved: ${
          nodePath.dirname(root)
        }/outside.txt, Workspace: ${root}`
      )
    }))
})

describe("OHEditor: editing", () => {
  it.effect("create then undo rewrites the same text (kept quirk)", () =>
    Effect.gen(function*() {
      const { root, run } = yield* setup
      const path = "/workspace/hello.txt"
      assert.deepStrictEqual(yield* run({ command: "create", path, fileText: "hello" }), {
        output: `File created successfully at: ${path}`,
        isError: false,
        oldFile: null,
        newFile: "hello"
      })
      assert.deepStrictEqual(yield* run({ command: "undo_edit", path }), {
        output:
          `Last edit to ${path} undone successfully. Here's the result of running \`cat -n\` on ${path}:\n     1\thello\n`,
        isError: false,
        oldFile: "hello",
        newFile: "hello"
      })
      assert.strictEqual(yield* contentOf(`${root}/hello.txt`), "hello")
      assert.strictEqual(
        (yield* run({ command: "undo_edit", path })).output,
        `ERROR:\nNo edit history found for ${path}.`
      )
    }))

  it.effect("create needs an existing parent directory", () =>
    Effect.gen(function*() {
      const { output } = yield* setup
      const path = "/workspace/no/such/dir.txt"
      assert.strictEqual(
        yield* output({ command: "create", path, fileText: "x" }),
        `ERROR:\nRan into [Errno 2] No such file or directory: '${path}' while trying to write to ${path}`
      )
    }))

  it.effect("undo restores edits in reverse order, keeping at most 10 per file", () =>
    Effect.gen(function*() {
      const { output, root } = yield* setup
      const path = "/workspace/n.txt"
      yield* output({ command: "create", path, fileText: "0" })
      for (let i = 1; i <= 11; i++) {
        yield* output({ command: "str_replace", path, oldStr: String(i - 1), newStr: String(i) })
      }
      for (let i = 10; i >= 1; i--) {
        yield* output({ command: "undo_edit", path })
        assert.strictEqual(yield* contentOf(`${root}/n.txt`), String(i))
      }
      assert.strictEqual(yield* output({ command: "undo_edit", path }), `ERROR:\nNo edit history found for ${path}.`)
    }))

  it.effect("insert without a trailing newline glues onto the last line (kept quirk)", () =>
    Effect.gen(function*() {
      const { output, root } = yield* setup
      yield* put(`${root}/glue.txt`, "a\nb")
      const path = "/workspace/glue.txt"
      assert.strictEqual(
        yield* output({ command: "insert", path, insertLine: "2", newStr: "X" }),
        `The file ${path} has been edited. Here's the result of running \`cat -n\` on a snippet of the edited file:\n     1\ta\n     2\tbX\n     3\t\n${REVIEW_INSERT}`
      )
      assert.strictEqual(yield* contentOf(`${root}/glue.txt`), "a\nbX\n")
    }))

  it.effect("insert at the top keeps the file's mode", () =>
    Effect.gen(function*() {
      const { root, run } = yield* setup
      yield* put(`${root}/top.sh`, "echo hi\n")
      yield* Effect.promise(() => fs.chmod(`${root}/top.sh`, 0o755))
      yield* run({ command: "insert", path: "/workspace/top.sh", insertLine: 0, newStr: "#!/bin/sh" })
      assert.strictEqual(yield* contentOf(`${root}/top.sh`), "#!/bin/sh\necho hi\n")
      const stats = yield* Effect.promise(() => fs.stat(`${root}/top.sh`))
      assert.strictEqual(stats.mode & 0o777, 0o755)
    }))

  it.effect("str_replace: missing, retried stripped, and repeated matches", () =>
    Effect.gen(function*() {
      const { output, root } = yield* setup
      yield* put(`${root}/s.txt`, "foo\nbar\nfoo\n")
      const path = "/workspace/s.txt"
      assert.strictEqual(
        yield* output({ command: "str_replace", path, oldStr: "  baz \n", newStr: "qux" }),
        `ERROR:\nNo replacement was performed, old_str \`baz\` did not appear verbatim in ${path}.`
      )
      assert.strictEqual(
        yield* output({ command: "str_replace", path, oldStr: "foo", newStr: "x" }),
        `ERROR:\nNo replacement was performed. Multiple occurrences of old_str \`foo\` in lines [1, 3]. Please ensure it is unique.`
      )
      assert.strictEqual(
        yield* output({ command: "str_replace", path, oldStr: "" }),
        `ERROR:\nNo replacement was performed. Multiple occurrences of old_str \`\` in lines [1, 2, 3, 4]. Please ensure it is unique.`
      )
      yield* output({ command: "str_replace", path, oldStr: " bar\n\n", newStr: " BAR " })
      assert.strictEqual(yield* contentOf(`${root}/s.txt`), "foo\nBAR\nfoo\n")
      yield* output({ command: "str_replace", path, oldStr: "BAR\n" })
      assert.strictEqual(yield* contentOf(`${root}/s.txt`), "foo\nfoo\n")
    }))

  it.effect("non-UTF-8 text is edited as Latin-1, keeping the other bytes", () =>
    Effect.gen(function*() {
      const { output, root } = yield* setup
      yield* put(`${root}/latin1.txt`, Uint8Array.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x6f, 0x6b, 0x0a]))
      const path = "/workspace/latin1.txt"
      yield* output({ command: "str_replace", path, oldStr: "ok", newStr: "fine" })
      const bytes = yield* Effect.promise(() => fs.readFile(`${root}/latin1.txt`))
      assert.deepStrictEqual([...bytes], [0x63, 0x61, 0x66, 0xe9, 0x0a, 0x66, 0x69, 0x6e, 0x65, 0x0a])
      assert.strictEqual(
        yield* output({ command: "str_replace", path, oldStr: "fine", newStr: "☃" }),
        `ERROR:\nRan into 'latin-1' codec can't encode character '\\u2603' in position 5: ordinal not in range(256) while trying to write to ${path}`
      )
    }))
})

describe("OHEditor: output limits", () => {
  it.effect("a file is cut at 16,000 characters with the notice, before numbering", () =>
    Effect.gen(function*() {
      const { output, root } = yield* setup
      yield* put(`${root}/long.txt`, "Line 1\n".repeat(16_000))
      const lines = (yield* output({ command: "view", path: "/workspace/long.txt" })).split("\n")
      assert.strictEqual(lines.length, 1 + 2286 + 1)
      assert.strictEqual(lines[2285], "  2285\tLine 1")
      assert.strictEqual(
        lines[2286],
        "  2286\tLine <response clipped><NOTE>Due to the max output limit, only part of this file has been shown to you. You should retry this tool after you have searched inside the file with `grep -n` in order to find the line numbers of what you are looking for.</NOTE>"
      )
      assert.strictEqual(lines[2287], "")
    }))
})

describe("OHEditor: directory view", () => {
  it.effect("lists two levels, sorted bytewise, hidden entries excluded and counted", () =>
    Effect.gen(function*() {
      const { output, root } = yield* setup
      for (const dir of ["b/d", ".git", "with space"]) {
        yield* Effect.promise(() => fs.mkdir(`${root}/${dir}`, { recursive: true }))
      }
      for (const file of ["a.txt", "B.txt", "b-2.txt", "b/c.txt", "b/.hidden", "b/d/e.txt", ".git/config", ".env"]) {
        yield* put(`${root}/${file}`, "x")
      }
      yield* Effect.promise(() => fs.symlink(`${root}/b`, `${root}/link`))
      yield* Effect.promise(() => fs.symlink(`${root}/gone`, `${root}/broken`))
      assert.strictEqual(
        yield* output({ command: "view", path: "/workspace" }),
        "Here's the files and directories up to 2 levels deep in /workspace, excluding hidden items:\n" +
          "/workspace/\n/workspace/B.txt\n/workspace/a.txt\n/workspace/b/\n/workspace/b-2.txt\n/workspace/b/c.txt\n" +
          "/workspace/b/d/\n/workspace/broken\n/workspace/link/\n/workspace/link/c.txt\n/workspace/link/d/\n" +
          "/workspace/with space/\n\n" +
          "2 hidden files/directories in this directory are excluded. You can use 'ls -la /workspace' to see them."
      )
      assert.strictEqual(
        yield* output({ command: "view", path: "/workspace/with space/" }),
        "Here's the files and directories up to 2 levels deep in /workspace/with space, excluding hidden items:\n" +
          "/workspace/with space/"
      )
    }))

  it.effect("a long listing is cut with the directory notice", () =>
    Effect.gen(function*() {
      const { output, root } = yield* setup
      const names = Array.from({ length: 1000 }, (_, i) => `file-${String(i).padStart(4, "0")}.txt`)
      yield* Effect.forEach(names, (name) => put(`${root}/${name}`, ""), { concurrency: 32 })
      const notice =
        "<response clipped><NOTE>Due to the max output limit, only part of this directory has been shown to you. You should use `ls -la` instead to view large directories incrementally.</NOTE>"
      // find's raw output is cut at 16,000 characters; then the directories (here only the root) get their "/".
      const stdout = ["/workspace", ...names.map((name) => `/workspace/${name}`)].map((line) => `${line}\n`).join("")
      assert.strictEqual(
        yield* output({ command: "view", path: "/workspace" }),
        "Here's the files and directories up to 2 levels deep in /workspace, excluding hidden items:\n" +
          "/workspace/" + stdout.slice("/workspace".length, 16_000) + notice
      )
    }))
})

const header = (path: string) => `Here's the content of the file ${path} displayed in Markdown format:\n`

describe("OHEditor: documents viewed as Markdown", () => {
  it.effect("views .pdf, .docx, .pptx and .xlsx as text", () =>
    Effect.gen(function*() {
      const { output, root } = yield* setup
      yield* put(`${root}/a.pdf`, documents.pdf(["Hello PDF (one)", "Second page"]))
      yield* put(`${root}/a.docx`, yield* Effect.promise(documents.docx))
      yield* put(`${root}/a.pptx`, yield* Effect.promise(documents.pptx))
      yield* put(`${root}/a.XLSX`, yield* Effect.promise(documents.xlsx))
      assert.strictEqual(
        yield* output({ command: "view", path: "/workspace/a.pdf" }),
        `${header("/workspace/a.pdf")}Hello PDF (one)\n\nSecond page\n`
      )
      assert.strictEqual(
        yield* output({ command: "view", path: "/workspace/a.docx" }),
        `${header("/workspace/a.docx")}# Quarterly report\n\nSales grew by 5% & costs fell.\n\nThe end.\n`
      )
      assert.strictEqual(
        yield* output({ command: "view", path: "/workspace/a.pptx" }),
        `${header("/workspace/a.pptx")}<!-- Slide number: 1 -->\n# Welcome\nFirst point\nSecond point\n\n`
          + "<!-- Slide number: 2 -->\nThanks <all>\n"
      )
      assert.strictEqual(
        yield* output({ command: "view", path: "/workspace/a.XLSX" }),
        `${header("/workspace/a.XLSX")}## Sales\n| Name | Units |\n| --- | --- |\n| Widget | 12 |\n| Gadget |  |\n\n`
          + "## Notes\n| ok | TRUE |\n| --- | --- |\n"
      )
    }))

  it.effect("clips a long document with OpenHands' binary-file notice", () =>
    Effect.gen(function*() {
      const { output, root } = yield* setup
      yield* put(`${root}/long.pdf`, documents.pdf(Array.from({ length: 400 }, (_, i) => `Page ${i} `.repeat(8))))
      const shown = yield* output({ command: "view", path: "/workspace/long.pdf" })
      const notice =
        "<response clipped><NOTE>Due to the max output limit, only part of this file has been shown to you. Please use Python libraries to view the entire file or search for specific content within the file.</NOTE>\n"
      assert.isTrue(shown.startsWith(`${header("/workspace/long.pdf")}${"Page 0 ".repeat(8).trim()}\n\nPage 1 `))
      assert.isTrue(shown.endsWith(notice))
      assert.strictEqual(shown.length, header("/workspace/long.pdf").length + 16_000 + notice.length)
    }))

  it.effect("a document that cannot be read is OHEditor's conversion error, with the reason", () =>
    Effect.gen(function*() {
      const { output, root } = yield* setup
      yield* put(`${root}/bad.docx`, "not a zip")
      assert.strictEqual(
        yield* output({ command: "view", path: "/workspace/bad.docx" }),
        "ERROR:\nError in converting file to Markdown: End of central directory record signature not found. Either not a zip file, or file is truncated.. Please use Python code to read /workspace/bad.docx"
      )
    }))
})
