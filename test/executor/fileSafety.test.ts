/**
 * File actions on what is not a plain file, and at the boundary of a restricted workspace
 * (issue 9, items 3 and 5): devices, FIFOs and sockets are refused without blocking, reads stop at
 * a cap counted in bytes read, a path swapped between the check and the use cannot lead outside,
 * hard-linked files are refused, and a directory view does not follow links out.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs/promises"
import * as net from "node:net"
import * as os from "node:os"
import * as nodePath from "node:path"
import { type EditorRequest, makeEditor } from "../../src/executor/editor/OHEditor.ts"
import { readFile, writeFile } from "../../src/executor/files/fileOps.ts"
import { FileTooLarge, openFile, readBounded } from "../../src/executor/files/safeOpen.ts"
import { Workspace } from "../../src/executor/workspace.ts"

/**
 * `base/ws` (the workspace, mounted at /workspace) and `base/out` (outside it, holding
 * `secret.txt` and `dir/file.txt`, both "SECRET"), with a restricted and an unrestricted view of
 * the workspace and an editor for each. Removed after the test.
 */
const layout = Effect.acquireRelease(
  Effect.promise(async () => {
    const base = await fs.realpath(await fs.mkdtemp(nodePath.join(os.tmpdir(), "file-safety-")))
    const root = nodePath.join(base, "ws")
    const out = nodePath.join(base, "out")
    await fs.mkdir(nodePath.join(out, "dir"), { recursive: true })
    await fs.mkdir(root)
    await fs.writeFile(nodePath.join(out, "secret.txt"), "SECRET")
    await fs.writeFile(nodePath.join(out, "dir", "file.txt"), "SECRET")
    const restricted = new Workspace({ root, mountPath: "/workspace", restricted: true })
    const open = new Workspace({ root, mountPath: "/workspace", restricted: false })
    const editorOf = (ws: Workspace) => {
      const editor = makeEditor(ws)
      return (req: Partial<EditorRequest> & Pick<EditorRequest, "command" | "path">) =>
        Effect.map(
          editor.run({ fileText: null, oldStr: null, newStr: null, insertLine: null, viewRange: null, ...req }, root),
          (result) => result.output
        )
    }
    return { base, root, out, restricted, open, edit: editorOf(restricted), editOpen: editorOf(open) }
  }),
  ({ base }) => Effect.promise(() => fs.rm(base, { recursive: true, force: true }))
)

const read = (ws: Workspace, root: string, path: string) => readFile(ws, root, { path, start: 0, end: -1 })
const write = (ws: Workspace, root: string, path: string, content: string) =>
  writeFile(ws, root, { path, content, start: 0, end: -1 })
const refusal = (path: string, kind: string) =>
  `Cannot act on ${path}: it is ${kind}. File actions only work on regular files and directories.`
const hardLinkRefusal = (path: string) =>
  `Cannot act on ${path}: it has 2 hard links. In a restricted workspace files with more than one link are refused, because another link may be outside the workspace.`

/** A child process for the test's lifetime, SIGKILLed (by its pid) afterwards. */
const child = (command: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.acquireRelease(
    Effect.sync(() => spawn(command, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] })),
    (process: ChildProcess) => Effect.sync(() => process.kill("SIGKILL"))
  )

/** Resolves once the child printed `line`. */
const printed = (process: ChildProcess, line: string) =>
  Effect.callback<void>((resume) => {
    let seen = ""
    process.stdout!.on("data", (chunk: Buffer) => {
      seen += chunk.toString()
      if (seen.includes(line)) resume(Effect.void)
    })
  })

/** Runs `effect`, failing the test when it takes `ms` or more (a hang fails instead of blocking the run). */
const quick = <A, E>(effect: Effect.Effect<A, E>, ms = 1_000) =>
  Effect.gen(function*() {
    const started = Date.now()
    const result = yield* Effect.timeoutOrElse(effect, {
      duration: ms * 2,
      orElse: () => Effect.die(new Error(`took more than ${ms * 2} ms`))
    })
    assert.isBelow(Date.now() - started, ms)
    return result
  })

describe("special files", () => {
  it.live("a FIFO is refused at once by FileRead, FileWrite and the editor, with or without a writer", () =>
    Effect.gen(function*() {
      const { edit, restricted, root } = yield* layout
      const fifo = `${root}/fifo`
      yield* Effect.promise(() => fs.writeFile(`${root}/plain.txt`, "still works\n"))
      const mkfifo = yield* child("mkfifo", [fifo])
      yield* Effect.callback<void>((resume) => void mkfifo.on("exit", () => resume(Effect.void)))
      const refused = { _tag: "Error", message: refusal(fifo, "a FIFO (named pipe)") } as const
      // No writer: a blocking open never returns.
      for (let i = 0; i < 5; i++) assert.deepStrictEqual(yield* quick(read(restricted, root, "fifo")), refused)
      // A writer that holds the FIFO open and never writes: a blocking read never returns.
      yield* child("sh", ["-c", "exec 3>\"$0\"; sleep 60", fifo])
      for (let i = 0; i < 5; i++) {
        assert.deepStrictEqual(yield* quick(read(restricted, root, "/workspace/fifo")), refused)
        assert.strictEqual(
          yield* quick(edit({ command: "view", path: "/workspace/fifo" })),
          `ERROR:\n${refusal("/workspace/fifo", "a FIFO (named pipe)")}`
        )
      }
      assert.deepStrictEqual(yield* quick(write(restricted, root, "fifo", "x")), refused)
      assert.strictEqual(
        yield* quick(edit({ command: "str_replace", path: "/workspace/fifo", oldStr: "a", newStr: "b" })),
        `ERROR:\n${refusal("/workspace/fifo", "a FIFO (named pipe)")}`
      )
      assert.strictEqual(
        yield* quick(edit({ command: "insert", path: "/workspace/fifo", insertLine: 0, newStr: "b" })),
        `ERROR:\n${refusal("/workspace/fifo", "a FIFO (named pipe)")}`
      )
      // The session still works.
      assert.deepStrictEqual(yield* quick(read(restricted, root, "plain.txt")), {
        _tag: "Ok",
        path: `${root}/plain.txt`,
        content: "still works\n"
      })
      assert.strictEqual((yield* Effect.promise(() => fs.stat(fifo))).isFIFO(), true)
    }))

  it.live("/dev/zero and /dev/null are refused (unrestricted, as the action server runs)", () =>
    Effect.gen(function*() {
      const { editOpen, open, root } = yield* layout
      assert.deepStrictEqual(yield* quick(read(open, root, "/dev/zero")), {
        _tag: "Error",
        message: refusal("/dev/zero", "a character device")
      })
      assert.strictEqual(
        yield* quick(editOpen({ command: "view", path: "/dev/zero" })),
        `ERROR:\n${refusal("/dev/zero", "a character device")}`
      )
      assert.strictEqual(
        yield* quick(editOpen({ command: "view", path: "/dev/zero", viewRange: [1, 2] })),
        `ERROR:\n${refusal("/dev/zero", "a character device")}`
      )
      assert.deepStrictEqual(yield* quick(write(open, root, "/dev/null", "x")), {
        _tag: "Error",
        message: refusal("/dev/null", "a character device")
      })
      // A link to a device is no way around it.
      yield* Effect.promise(() => fs.symlink("/dev/zero", `${root}/zero`))
      assert.deepStrictEqual(yield* quick(read(open, root, "zero")), {
        _tag: "Error",
        message: refusal(`${root}/zero`, "a character device")
      })
    }))

  it.live("a socket is refused", () =>
    Effect.gen(function*() {
      const { edit, restricted, root } = yield* layout
      const path = `${root}/sock`
      yield* Effect.acquireRelease(
        Effect.callback<net.Server>((resume) => {
          const server = net.createServer().listen(path, () => resume(Effect.succeed(server)))
        }),
        (server) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
      )
      assert.deepStrictEqual(yield* quick(read(restricted, root, "sock")), {
        _tag: "Error",
        message: refusal(path, "a socket")
      })
      assert.strictEqual(
        yield* quick(edit({ command: "view", path: "/workspace/sock" })),
        `ERROR:\n${refusal("/workspace/sock", "a socket")}`
      )
    }))
})

describe("bounded reads", () => {
  it.effect("FileRead refuses a file above 32 MiB without reading it", () =>
    Effect.gen(function*() {
      const { restricted, root } = yield* layout
      // Text at the start (the binary check reads 1024 bytes), then sparse: 33 MiB that take no disk.
      yield* Effect.promise(() =>
        fs.writeFile(`${root}/big.txt`, "a".repeat(2048)).then(() => fs.truncate(`${root}/big.txt`, 33 << 20))
      )
      assert.deepStrictEqual(yield* read(restricted, root, "big.txt"), {
        _tag: "Error",
        message: `File is too large to read: ${root}/big.txt (${33 << 20} bytes; at most ${
          32 << 20
        } bytes are read). Use the shell to read parts of it.`
      })
    }))

  it.effect("the cap counts bytes actually read, not the size stat reports", () =>
    Effect.gen(function*() {
      const { root } = yield* layout
      yield* Effect.promise(() => fs.writeFile(`${root}/grows.txt`, "x".repeat(100)))
      const file = yield* openFile({ path: `${root}/grows.txt`, boundary: undefined }, "grows.txt")
      // What a device or a growing file looks like to stat: size 0.
      const failure = yield* Effect.flip(readBounded({ ...file, stats: Object.assign(file.stats, { size: 0 }) }, 10))
      assert.instanceOf(failure, FileTooLarge)
      assert.strictEqual(failure.size, 11)
      assert.strictEqual((yield* readBounded(file, 100)).toString(), "x".repeat(100))
    }).pipe(Effect.scoped))
})

describe("restricted workspace", () => {
  /**
   * A process swapping, as fast as it can, `ws/f` between a regular file ("INSIDE") and a link to
   * `out/secret.txt`, and `ws/d` between a directory (holding `file.txt`, "INSIDE") and a link to
   * `out/dir`.
   */
  const SWAPPER = `
    const fs = require("node:fs")
    const { ROOT: root, OUT: out } = process.env
    const step = (run) => { try { run() } catch {} }
    fs.mkdirSync(root + "/d")
    fs.writeFileSync(root + "/d/file.txt", "INSIDE")
    for (let i = 0; ; i++) {
      step(() => fs.symlinkSync(out + "/secret.txt", root + "/.link"))
      step(() => fs.renameSync(root + "/.link", root + "/f"))
      step(() => fs.writeFileSync(root + "/.file", "INSIDE"))
      step(() => fs.renameSync(root + "/.file", root + "/f"))
      step(() => fs.renameSync(root + "/d", root + "/.dir"))
      step(() => fs.symlinkSync(out + "/dir", root + "/d"))
      step(() => fs.unlinkSync(root + "/d"))
      // A FileWrite may have created d (it makes missing parents) while it was away.
      step(() => fs.rmSync(root + "/d", { recursive: true, force: true }))
      step(() => fs.renameSync(root + "/.dir", root + "/d"))
      if (i === 0) process.stdout.write("go\\n")
    }`

  it.live("a path swapped between the check and the open never leads outside (3,000 reads, 300 writes)", () =>
    Effect.gen(function*() {
      const { edit, out, restricted, root } = yield* layout
      const swapper = yield* child(process.execPath, ["-e", SWAPPER], { ROOT: root, OUT: out })
      yield* printed(swapper, "go")
      let leaked = 0
      let readInside = 0
      for (let i = 0; i < 3_000; i++) {
        const result = yield* read(restricted, root, i % 2 === 0 ? "/workspace/f" : "/workspace/d/file.txt")
        if (result._tag === "Ok" && result.content.includes("SECRET")) leaked++
        if (result._tag === "Ok" && result.content.includes("INSIDE")) readInside++
        if (i % 10 === 0) {
          const viewed = yield* edit({ command: "view", path: i % 20 === 0 ? "/workspace/f" : "/workspace/d/file.txt" })
          if (viewed.includes("SECRET")) leaked++
        }
      }
      for (let i = 0; i < 300; i++) {
        if (i % 3 === 0) yield* edit({ command: "insert", path: "/workspace/f", insertLine: 0, newStr: "WRITTEN" })
        else yield* write(restricted, root, i % 3 === 1 ? "/workspace/f" : `/workspace/d/new-${i}.txt`, "WRITTEN")
      }
      assert.strictEqual(swapper.exitCode, null, "the swapper raced until the end")
      assert.strictEqual(leaked, 0, "reads that returned the outside file")
      assert.isAbove(readInside, 0, "reads that got through at all")
      assert.strictEqual(yield* Effect.promise(() => fs.readFile(`${out}/secret.txt`, "utf8")), "SECRET")
      assert.deepStrictEqual(yield* Effect.promise(() => fs.readdir(`${out}/dir`)), ["file.txt"])
      assert.strictEqual(yield* Effect.promise(() => fs.readFile(`${out}/dir/file.txt`, "utf8")), "SECRET")
      assert.deepStrictEqual((yield* Effect.promise(() => fs.readdir(out))).sort(), ["dir", "secret.txt"])
    }))

  it.effect("what was opened is checked, not the path: a directory turned into a link out is refused", () =>
    Effect.gen(function*() {
      const { out, restricted, root } = yield* layout
      yield* Effect.promise(() => fs.mkdir(`${root}/d`))
      yield* Effect.promise(() => fs.writeFile(`${root}/d/secret.txt`, "INSIDE"))
      // The check saw a directory...
      const located = yield* restricted.locate("/workspace/d/secret.txt", root)
      assert.strictEqual(located.path, `${root}/d/secret.txt`)
      // ...which then became a link out, before the open.
      yield* Effect.promise(() => fs.rm(`${root}/d`, { recursive: true }))
      yield* Effect.promise(() => fs.symlink(out, `${root}/d`))
      const refused = yield* Effect.flip(openFile(located, "/workspace/d/secret.txt"))
      assert.deepStrictEqual(
        refused.message,
        `Invalid path traversal: /workspace/d/secret.txt. Path resolves outside the workspace. Resolved: ${out}/secret.txt, Workspace: ${root}`
      )
      // A final component turned into a link is not followed (ELOOP when it changes after the
      // lstat that comes first, refused by that lstat here).
      yield* Effect.promise(() => fs.writeFile(`${root}/f`, "INSIDE"))
      const file = yield* restricted.locate("/workspace/f", root)
      yield* Effect.promise(() => fs.rm(`${root}/f`).then(() => fs.symlink(`${out}/secret.txt`, `${root}/f`)))
      const looped = yield* Effect.flip(openFile(file, "/workspace/f"))
      assert.strictEqual(looped.message, refusal("/workspace/f", "a symbolic link"))
    }).pipe(Effect.scoped))

  it.effect("a file hard-linked to one outside is refused; unrestricted it is read", () =>
    Effect.gen(function*() {
      const { edit, open, out, restricted, root } = yield* layout
      yield* Effect.promise(() => fs.link(`${out}/secret.txt`, `${root}/hl`))
      const refused = { _tag: "Error", message: hardLinkRefusal(`${root}/hl`) } as const
      assert.deepStrictEqual(yield* read(restricted, root, "hl"), refused)
      assert.deepStrictEqual(yield* write(restricted, root, "hl", "x"), refused)
      assert.strictEqual(
        yield* edit({ command: "view", path: "/workspace/hl" }),
        `ERROR:\n${hardLinkRefusal("/workspace/hl")}`
      )
      assert.strictEqual(
        yield* edit({ command: "str_replace", path: "/workspace/hl", oldStr: "SECRET", newStr: "x" }),
        `ERROR:\n${hardLinkRefusal("/workspace/hl")}`
      )
      assert.strictEqual(yield* Effect.promise(() => fs.readFile(`${out}/secret.txt`, "utf8")), "SECRET")
      assert.deepStrictEqual(yield* read(open, root, "hl"), { _tag: "Ok", path: `${root}/hl`, content: "SECRET" })
    }))

  it.effect("a directory view lists a link out of the workspace as a name and does not follow it", () =>
    Effect.gen(function*() {
      const { edit, editOpen, root } = yield* layout
      yield* Effect.promise(async () => {
        await fs.mkdir(`${root}/sub`)
        await fs.writeFile(`${root}/sub/x.txt`, "x")
        await fs.symlink("/etc", `${root}/etc`)
        await fs.symlink("/etc", `${root}/sub/etc2`)
        await fs.symlink(`${root}/sub`, `${root}/inside`)
      })
      assert.strictEqual(
        yield* edit({ command: "view", path: "/workspace" }),
        [
          "Here's the files and directories up to 2 levels deep in /workspace, excluding hidden items:",
          "/workspace/",
          "/workspace/etc",
          "/workspace/inside/",
          "/workspace/inside/etc2",
          "/workspace/inside/x.txt",
          "/workspace/sub/",
          "/workspace/sub/etc2",
          "/workspace/sub/x.txt"
        ].join("\n")
      )
      assert.strictEqual(
        yield* edit({ command: "view", path: "/workspace/etc" }),
        `ERROR:\nInvalid path traversal: /workspace/etc. Path resolves outside the workspace. Resolved: /etc, Workspace: ${root}`
      )
      // Unrestricted, links are followed as `find -L` does.
      const listing = yield* editOpen({ command: "view", path: "/workspace" })
      assert.include(listing, "\n/workspace/etc/\n")
      assert.include(listing, "\n/workspace/etc/passwd\n")
    }))

  it.effect("FileWrite creates missing parents inside, and a new file with mode 0664", () =>
    Effect.gen(function*() {
      const { restricted, root } = yield* layout
      assert.deepStrictEqual(yield* write(restricted, root, "/workspace/a/b/c.txt", "hi"), {
        _tag: "Ok",
        path: `${root}/a/b/c.txt`,
        content: ""
      })
      assert.strictEqual(yield* Effect.promise(() => fs.readFile(`${root}/a/b/c.txt`, "utf8")), "hi\n")
      assert.strictEqual((yield* Effect.promise(() => fs.stat(`${root}/a/b/c.txt`))).mode & 0o777, 0o664)
    }))
})
