/** File read/write (spec §7) and the editor (spec §6) through the runtime. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  CmdRunAction,
  ErrorObservation,
  FileEditAction,
  FileEditObservation,
  FileReadAction,
  FileReadObservation,
  FileWriteAction,
  FileWriteObservation,
  type RuntimeShape
} from "../../src/index.ts"
import { withRuntime } from "./helpers.ts"
import type { ConformanceTarget } from "./target.ts"

const PNG_1x1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

const edit = (rt: RuntimeShape, fields: ConstructorParameters<typeof FileEditAction>[0]) =>
  rt.edit(new FileEditAction(fields)).pipe(Effect.map((o) => {
    assert.instanceOf(o, FileEditObservation)
    return o as FileEditObservation
  }))

export const filesConformance = (target: ConformanceTarget) => {
  describe("files", () => {
    it.live("writes with OpenHands' trailing newline and reads it back, whole and by lines", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const path = `${rt.info.workspace}/dir/new/a.txt`
          const written = yield* rt.write({ path, content: "a\nb\nc\nd\ne" })
          assert.instanceOf(written, FileWriteObservation)
          assert.strictEqual(written.content, "")
          assert.strictEqual((written as FileWriteObservation).path, path)
          const whole = yield* rt.read(path)
          assert.instanceOf(whole, FileReadObservation)
          assert.strictEqual(whole.content, "a\nb\nc\nd\ne\n")
          assert.strictEqual((yield* rt.read(new FileReadAction({ path, start: 1, end: 3 }))).content, "b\nc\n")
          assert.strictEqual((yield* rt.read(new FileReadAction({ path, start: 4, end: 5 }))).content, "d\ne\n")
          // Splice lines 1..3 (0-based, end exclusive) with one new line.
          yield* rt.write(new FileWriteAction({ path, content: "X", start: 1, end: 3 }))
          assert.strictEqual((yield* rt.read(path)).content, "a\nX\nd\ne\n")
          assert.strictEqual((yield* rt.runCommand("stat -c %a dir/new/a.txt")).content, "664")
        })))

    it.live("resolves relative paths against the shell's cwd", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          yield* rt.runCommand("mkdir -p sub && cd sub")
          const written = yield* rt.write({ path: "rel.txt", content: "r" })
          assert.strictEqual((written as FileWriteObservation).path, `${rt.info.workspace}/sub/rel.txt`)
          assert.strictEqual((yield* rt.runCommand("cat rel.txt")).content, "r")
        })))

    it.live("answers missing files, directories and binaries with OpenHands' errors", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const ws = rt.info.workspace
          const missing = yield* rt.read(`${ws}/nope.txt`)
          assert.instanceOf(missing, ErrorObservation)
          assert.strictEqual(
            missing.content,
            `File not found: ${ws}/nope.txt. Your current working directory is ${ws}.`
          )
          const dir = yield* rt.read(ws)
          assert.strictEqual(dir.content, `Path is a directory: ${ws}. You can only read files`)
          yield* rt.runCommand("printf 'a\\000b\\001\\002' > blob.bin")
          assert.strictEqual((yield* rt.read(`${ws}/blob.bin`)).content, "ERROR_BINARY_FILE")
          const toDir = yield* rt.write({ path: ws, content: "x" })
          assert.strictEqual(toDir.content, `Path is a directory: ${ws}. You can only write to files`)
        })))

    it.live("returns images as data URLs", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          yield* rt.runCommand(`echo '${PNG_1x1}' | base64 -d > pixel.png`)
          const image = yield* rt.read(`${rt.info.workspace}/pixel.png`)
          assert.strictEqual(image.content, `data:image/png;base64,${PNG_1x1}`)
        })))

    // Every runtime restricts file actions to its workspace by default (`restrictToWorkspace`).
    {
      it.live("refuses paths outside the workspace, including through symlinks", () =>
        withRuntime(target, (rt) =>
          Effect.gen(function*() {
            const ws = rt.info.workspace
            const outside = yield* rt.read("/etc/hostname")
            assert.strictEqual(outside.content, `Invalid path: /etc/hostname. You can only work with files in ${ws}.`)
            yield* rt.runCommand("ln -s /etc escape")
            const viaLink = yield* rt.read(`${ws}/escape/hostname`)
            assert.strictEqual(
              viaLink.content,
              `Invalid path traversal: ${ws}/escape/hostname. Path resolves outside the workspace. Resolved: /etc/hostname, Workspace: ${ws}`
            )
            const write = yield* rt.write({ path: "../escaped.txt", content: "no" })
            assert.instanceOf(write, ErrorObservation)
            assert.strictEqual((yield* rt.runCommand("test -e ../escaped.txt && echo yes || echo no")).content, "no")
          })))
    }
  })

  describe("editor", () => {
    it.live("create, view, str_replace, insert and undo with OpenHands' exact texts", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const p = `${rt.info.workspace}/test.txt`
          const created = yield* edit(rt, {
            path: p,
            command: "create",
            fileText: "This is a test file.\nThis file is for testing purposes.\n"
          })
          assert.strictEqual(created.content, `File created successfully at: ${p}`)
          const view = yield* edit(rt, { path: p, command: "view" })
          assert.strictEqual(
            view.content,
            `Here's the result of running \`cat -n\` on ${p}:\n     1\tThis is a test file.\n     2\tThis file is for testing purposes.\n     3\t\n`
          )
          const replaced = yield* edit(rt, {
            path: p,
            command: "str_replace",
            oldStr: "test file",
            newStr: "sample file"
          })
          assert.strictEqual(
            replaced.content,
            `The file ${p} has been edited. Here's the result of running \`cat -n\` on a snippet of ${p}:\n     1\tThis is a sample file.\n     2\tThis file is for testing purposes.\n     3\t\nReview the changes and make sure they are as expected. Edit the file again if necessary.`
          )
          assert.strictEqual(
            replaced.diff,
            `--- ${p}\n+++ ${p}\n@@ -1 +1 @@\n-This is a test file.\n+This is a sample file.`
          )
          assert.strictEqual(replaced.oldContent, "test file")
          assert.strictEqual(replaced.newContent, "sample file")
          const inserted = yield* edit(rt, { path: p, command: "insert", insertLine: 1, newStr: "Inserted." })
          assert.include(inserted.content, "     2\tInserted.")
          assert.strictEqual((yield* rt.runCommand("sed -n 2p test.txt")).content, "Inserted.")
          const undone = yield* edit(rt, { path: p, command: "undo_edit" })
          assert.isTrue(undone.content.startsWith(`Last edit to ${p} undone successfully. `))
          assert.strictEqual(
            (yield* rt.runCommand("cat test.txt")).content,
            "This is a sample file.\nThis file is for testing purposes."
          )
        })))

    it.live("reports editor errors as observations", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const p = `${rt.info.workspace}/dup.txt`
          yield* edit(rt, { path: p, command: "create", fileText: "same\nsame\n" })
          const dup = yield* edit(rt, { path: p, command: "str_replace", oldStr: "same", newStr: "other" })
          assert.strictEqual(
            dup.content,
            "ERROR:\nNo replacement was performed. Multiple occurrences of old_str `same` in lines [1, 2]. Please ensure it is unique."
          )
          assert.strictEqual(dup.diff, "")
          const absent = yield* edit(rt, { path: p, command: "str_replace", oldStr: "nothere", newStr: "x" })
          assert.strictEqual(
            absent.content,
            `ERROR:\nNo replacement was performed, old_str \`nothere\` did not appear verbatim in ${p}.`
          )
          const exists = yield* edit(rt, { path: p, command: "create", fileText: "x" })
          assert.strictEqual(
            exists.content,
            `ERROR:\nInvalid \`path\` parameter: ${p}. File already exists at: ${p}. Cannot overwrite files using command \`create\`.`
          )
          const relative = yield* edit(rt, { path: "dup.txt", command: "view" })
          assert.strictEqual(
            relative.content,
            `ERROR:\nInvalid \`path\` parameter: dup.txt. The path should be an absolute path, starting with \`/\`. Maybe you meant ${rt.info.workspace}/dup.txt?`
          )
        })))

    it.live("views a line range through FileReadAction with the editor", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const p = `${rt.info.workspace}/r.txt`
          yield* rt.write({ path: p, content: "This is a test file.\nThis file is for testing purposes." })
          const ranged = yield* rt.read(new FileReadAction({ path: p, implSource: "oh_aci", viewRange: [2, 3] }))
          assert.instanceOf(ranged, FileReadObservation)
          assert.strictEqual(
            ranged.content,
            `NOTE: We only show up to 2 since there're only 2 lines in this file.\nHere's the result of running \`cat -n\` on ${p}:\n     2\tThis file is for testing purposes.\n`
          )
        })))

    it.live("lists a directory two levels deep without hidden entries", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const ws = rt.info.workspace
          yield* rt.runCommand(new CmdRunAction({ command: "mkdir -p a/b/c .hidden && touch a/f.txt .dot" }))
          const listing = yield* edit(rt, { path: ws, command: "view" })
          assert.strictEqual(
            listing.content,
            `Here's the files and directories up to 2 levels deep in ${ws}, excluding hidden items:\n${ws}/\n${ws}/a/\n${ws}/a/b/\n${ws}/a/f.txt\n\n2 hidden files/directories in this directory are excluded. You can use 'ls -la ${ws}' to see them.`
          )
        })))
  })
}
