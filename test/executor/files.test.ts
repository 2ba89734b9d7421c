import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as nodePath from "node:path"
import { isBinaryBytes, isBinaryFile } from "../../src/executor/files/binary.ts"
import { readFile, writeFile } from "../../src/executor/files/fileOps.ts"
import { insertLines, readLines, splitLines } from "../../src/executor/files/lines.ts"
import { Workspace } from "../../src/executor/workspace.ts"

/** A fresh workspace directory mounted at /workspace (restricted); removed after the test. */
const workspace = Effect.acquireRelease(
  Effect.promise(async () => {
    const root = await fs.realpath(await fs.mkdtemp(nodePath.join(os.tmpdir(), "files-test-")))
    return { root, ws: new Workspace({ root, mountPath: "/workspace", restricted: true }) }
  }),
  ({ root }) => Effect.promise(() => fs.rm(root, { recursive: true, force: true }))
)

const put = (path: string, content: string | Uint8Array) => Effect.promise(() => fs.writeFile(path, content))
const contentOf = (path: string) => Effect.promise(() => fs.readFile(path, "utf8"))

const PNG_HEADER = Uint8Array.from([
  0x89,
  0x50,
  0x4e,
  0x47,
  0x0d,
  0x0a,
  0x1a,
  0x0a,
  0x00,
  0x00,
  0x00,
  0x0d,
  0x49,
  0x48,
  0x44,
  0x52,
  0x00,
  0x00,
  0x00,
  0x01,
  0x00,
  0x00,
  0x00,
  0x01,
  0x08,
  0x06,
  0x00,
  0x00,
  0x00,
  0x1f,
  0x15,
  0xc4,
  0x89
])

describe("readLines", () => {
  const lines = ["a", "b", "c", "d", "e"]
  const observed: ReadonlyArray<readonly [number, number, Array<string>]> = [
    [0, -1, ["a", "b", "c", "d", "e"]],
    [1, -1, ["b", "c", "d", "e"]],
    [0, 2, ["a", "b"]],
    [1, 3, ["b", "c"]],
    [2, 2, ["c"]],
    [3, 1, ["d"]],
    [0, 0, ["a"]],
    [4, 5, ["d", "e"]],
    [10, -1, []],
    [-5, 2, ["a", "b"]]
  ]
  for (const [start, end, expected] of observed) {
    it(`(${start}, ${end})`, () => assert.deepStrictEqual(readLines(lines, start, end), expected))
  }
})

describe("insertLines", () => {
  const old = ["a", "b", "c", "d", "e"]
  it("replaces [start, end)", () => assert.deepStrictEqual(insertLines(["X"], old, 1, 3), ["a", "X", "d", "e"]))
  it("end -1 drops the rest", () => assert.deepStrictEqual(insertLines(["X"], old, 2, -1), ["a", "b", "X"]))
  it("start 0 keeps nothing before", () => assert.deepStrictEqual(insertLines(["X"], old, 0, 2), ["X", "c", "d", "e"]))
})

describe("splitLines", () => {
  it("keeps line ends and reads CR and CRLF as LF, like Python's text mode", () => {
    assert.deepStrictEqual(splitLines("a\nb"), ["a\n", "b"])
    assert.deepStrictEqual(splitLines("a\r\nb\rc\n"), ["a\n", "b\n", "c\n"])
    assert.deepStrictEqual(splitLines(""), [])
  })
})

const bytes = (text: string) => new TextEncoder().encode(text)

describe("isBinaryBytes", () => {
  it("PNG header bytes are binary", () => assert.isTrue(isBinaryBytes(PNG_HEADER)))
  it("UTF-8 text with accents is text", () => assert.isFalse(isBinaryBytes(bytes("Café crème, naïve façade\n"))))
  it("a NUL byte makes it binary", () => assert.isTrue(isBinaryBytes(bytes("a\x00b"))))
  it("empty is text", () => assert.isFalse(isBinaryBytes(new Uint8Array(0))))
  it("a small PDF header is text", () =>
    assert.isFalse(isBinaryBytes(bytes("%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\n"))))
  it("Latin-1 accents without NUL or 0xFF are text", () =>
    assert.isFalse(isBinaryBytes(Uint8Array.from([0x63, 0x61, 0x66, 0xe9, 0x0a]))))
  it("a 0xFF byte makes invalid UTF-8 binary", () => assert.isTrue(isBinaryBytes(Uint8Array.from([0x61, 0xff, 0x62]))))
  it("more than 80% control bytes are binary", () => {
    assert.isTrue(isBinaryBytes(Uint8Array.from([1, 2, 3, 4, 5, 0x61])))
    assert.isFalse(isBinaryBytes(Uint8Array.from([1, 2, 3, 4, 0x61])))
  })
  it("mostly high bytes that are not UTF-8 are binary", () =>
    assert.isTrue(isBinaryBytes(Uint8Array.from([0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87]))))
})

/** `isBinaryFile` on `path`, opened for the check. */
const check = (path: string) =>
  Effect.acquireUseRelease(
    Effect.promise(() => fs.open(path)),
    (handle) => isBinaryFile(path, handle),
    (handle) => Effect.promise(() => handle.close())
  )

describe("isBinaryFile", () => {
  it.effect("checks the first 1024 bytes; .pyc is binary; an unreadable file (a directory) counts as text", () =>
    Effect.gen(function*() {
      const { root } = yield* workspace
      yield* put(`${root}/image.png`, PNG_HEADER)
      yield* put(`${root}/late.txt`, "x".repeat(1024) + "\x00")
      yield* put(`${root}/mod.pyc`, "plain")
      assert.isTrue(yield* check(`${root}/image.png`))
      assert.isFalse(yield* check(`${root}/late.txt`))
      assert.isTrue(yield* check(`${root}/mod.pyc`))
      assert.isFalse(yield* check(root))
    }))
})

describe("readFile", () => {
  it.effect("reads text, sliced with read_lines, line endings kept", () =>
    Effect.gen(function*() {
      const { root, ws } = yield* workspace
      yield* put(`${root}/f.txt`, "a\nb\r\nc\nd\ne")
      assert.deepStrictEqual(yield* readFile(ws, root, { path: "/workspace/f.txt", start: 0, end: -1 }), {
        _tag: "Ok",
        path: `${root}/f.txt`,
        content: "a\nb\nc\nd\ne"
      })
      assert.deepStrictEqual(yield* readFile(ws, root, { path: "f.txt", start: 1, end: 3 }), {
        _tag: "Ok",
        path: `${root}/f.txt`,
        content: "b\nc\n"
      })
    }))

  it.effect("resolves relative paths against the shell's cwd", () =>
    Effect.gen(function*() {
      const { root, ws } = yield* workspace
      yield* Effect.promise(() => fs.mkdir(`${root}/sub`))
      yield* put(`${root}/sub/g.txt`, "in sub\n")
      const result = yield* readFile(ws, `${root}/sub`, { path: "g.txt", start: 0, end: -1 })
      assert.deepStrictEqual(result, { _tag: "Ok", path: `${root}/sub/g.txt`, content: "in sub\n" })
    }))

  it.effect("returns images as data URLs, before the binary check", () =>
    Effect.gen(function*() {
      const { root, ws } = yield* workspace
      yield* put(`${root}/pic.PNG`, PNG_HEADER)
      yield* put(`${root}/blob.bin`, PNG_HEADER)
      const image = yield* readFile(ws, root, { path: "pic.PNG", start: 0, end: -1 })
      assert.deepStrictEqual(image, {
        _tag: "Ok",
        path: `${root}/pic.PNG`,
        content: `data:image/png;base64,${Buffer.from(PNG_HEADER).toString("base64")}`
      })
      assert.deepStrictEqual(yield* readFile(ws, root, { path: "blob.bin", start: 0, end: -1 }), {
        _tag: "Error",
        message: "ERROR_BINARY_FILE"
      })
    }))

  it.effect("reports missing files, directories, undecodable text and workspace violations", () =>
    Effect.gen(function*() {
      const { root, ws } = yield* workspace
      yield* put(`${root}/latin1.txt`, Uint8Array.from([0x63, 0x61, 0x66, 0xe9, 0x0a]))
      const read = (path: string) => readFile(ws, root, { path, start: 0, end: -1 })
      assert.deepStrictEqual(yield* read("nope.txt"), {
        _tag: "Error",
        message: `File not found: ${root}/nope.txt. Your current working directory is ${root}.`
      })
      assert.deepStrictEqual(yield* read("/workspace"), {
        _tag: "Error",
        message: `Path is a directory: ${root}. You can only read files`
      })
      assert.deepStrictEqual(yield* read("latin1.txt"), {
        _tag: "Error",
        message: `File could not be decoded as utf-8: ${root}/latin1.txt.`
      })
      assert.deepStrictEqual(yield* read("/etc/hostname"), {
        _tag: "Error",
        message: `Invalid path: /etc/hostname. You can only work with files in ${root}.`
      })
    }))
})

describe("writeFile", () => {
  it.effect("appends a newline to every piece of the content", () =>
    Effect.gen(function*() {
      const { root, ws } = yield* workspace
      const write = (path: string, content: string) => writeFile(ws, root, { path, content, start: 0, end: -1 })
      assert.deepStrictEqual(yield* write("a.txt", "abc"), { _tag: "Ok", path: `${root}/a.txt`, content: "" })
      assert.strictEqual(yield* contentOf(`${root}/a.txt`), "abc\n")
      yield* write("b.txt", "abc\n")
      assert.strictEqual(yield* contentOf(`${root}/b.txt`), "abc\n\n")
      yield* write("c.txt", "")
      assert.strictEqual(yield* contentOf(`${root}/c.txt`), "\n")
    }))

  it.effect("creates parent directories and new files with mode 0664", () =>
    Effect.gen(function*() {
      const { root, ws } = yield* workspace
      const owner = { uid: process.getuid!(), gid: process.getgid!() }
      const result = yield* writeFile(ws, root, {
        path: "/workspace/x/y/z.txt",
        content: "hi",
        start: 0,
        end: -1,
        owner
      })
      assert.deepStrictEqual(result, { _tag: "Ok", path: `${root}/x/y/z.txt`, content: "" })
      const stats = yield* Effect.promise(() => fs.stat(`${root}/x/y/z.txt`))
      assert.strictEqual(stats.mode & 0o777, 0o664)
    }))

  it.effect("splices existing files with insert_lines and keeps their mode", () =>
    Effect.gen(function*() {
      const { root, ws } = yield* workspace
      yield* put(`${root}/f.txt`, "a\nb\nc\nd\ne\n")
      yield* Effect.promise(() => fs.chmod(`${root}/f.txt`, 0o600))
      yield* writeFile(ws, root, { path: "f.txt", content: "X", start: 1, end: 3 })
      assert.strictEqual(yield* contentOf(`${root}/f.txt`), "a\nX\nd\ne\n")
      yield* writeFile(ws, root, { path: "f.txt", content: "Y", start: 2, end: -1 })
      assert.strictEqual(yield* contentOf(`${root}/f.txt`), "a\nX\nY\n")
      yield* writeFile(ws, root, { path: "f.txt", content: "whole", start: 0, end: -1 })
      assert.strictEqual(yield* contentOf(`${root}/f.txt`), "whole\n")
      const stats = yield* Effect.promise(() => fs.stat(`${root}/f.txt`))
      assert.strictEqual(stats.mode & 0o777, 0o600)
    }))

  it.effect("reports directories, undecodable files and workspace violations", () =>
    Effect.gen(function*() {
      const { root, ws } = yield* workspace
      yield* put(`${root}/latin1.txt`, Uint8Array.from([0x63, 0x61, 0x66, 0xe9, 0x0a]))
      const write = (path: string) => writeFile(ws, root, { path, content: "x", start: 0, end: -1 })
      assert.deepStrictEqual(yield* write("/workspace"), {
        _tag: "Error",
        message: `Path is a directory: ${root}. You can only write to files`
      })
      assert.deepStrictEqual(yield* write("latin1.txt"), {
        _tag: "Error",
        message: `File could not be decoded as utf-8: ${root}/latin1.txt`
      })
      assert.deepStrictEqual(yield* write("../escape.txt"), {
        _tag: "Error",
        message: `Invalid path traversal: ../escape.txt. Path resolves outside the workspace. Resolved: ${
          nodePath.dirname(root)
        }/escape.txt, Workspace: ${root}`
      })
    }))
})
