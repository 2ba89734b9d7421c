/**
 * Group 3, boundary escapes: file actions of a CliRuntime restricted to its
 * workspace, attacked from inside the workspace with links to an outside
 * directory, and of a LocalRuntime with default options, attacked directly. No outside contents may come back,
 * no write may land outside, no outside name may be listed. Then the server's other doors: the file viewer, which
 * answers without a key (fileViewer.ts), and the VS Code port, which only its connection token opens (vscode.ts).
 * Then microagent loading over directory links (microagentLinks.ts).
 */
import { Effect, ManagedRuntime } from "effect"
import { spawn } from "node:child_process"
import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CliRuntime, FileEditAction, Runtime, type RuntimeShape } from "../../src/index.ts"
import { LocalRuntime } from "../../src/local.ts"
import { fileViewerRows } from "./fileViewer.ts"
import { microagentLinkRows } from "./microagentLinks.ts"
import { atMost, type GroupContext, type Row, sleep } from "./rows.ts"
import { vscodeRows } from "./vscode.ts"

/**
 * Swap the directory `dir` with a symlink to `outside` (and back) as fast as Python
 * can, for `seconds` at most: a path that resolves inside at check time goes
 * through the link at open time, some of the time.
 */
const SWAPPER = `
import os, shutil, sys, time
d, outside, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
real, link = d + ".real", d + ".link"
os.symlink(outside, link)
end = time.time() + seconds
while time.time() < end:
    try:
        if not os.path.lexists(real):
            os.rename(d, real); os.rename(link, d)
        elif os.path.islink(d):
            os.rename(d, link)
        elif os.path.isdir(d):
            shutil.rmtree(d)  # a write made a new directory while ours was away
        else:
            os.rename(real, d)
    except OSError:
        pass
`

const contentOf = (observation: { readonly content?: unknown }) => String(observation.content ?? "")

/**
 * A LocalRuntime given no `restrictToWorkspace` (its action server, started with the option's
 * default) attacked directly: an outside file read, written, listed and copied out. Swapping
 * CliRuntime for a server runtime must not widen what file actions reach.
 */
const serverDefaults = async (
  ws: string,
  outside: { readonly file: string; readonly secret: string; readonly dir: string }
): Promise<Row> => {
  const runtime = ManagedRuntime.make(LocalRuntime.layer({ workspace: ws }))
  try {
    const rt = await runtime.runPromise(Runtime)
    const read = contentOf(await runtime.runPromise(rt.read(outside.file))).includes(outside.secret)
    await runtime.runPromise(rt.write({ path: outside.file, content: "WRITTEN-BY-SERVER" }))
    const written = readFileSync(outside.file, "utf8") !== outside.secret
    writeFileSync(outside.file, outside.secret)
    const listed = (await runtime.runPromise(rt.listFiles(outside.dir))).length > 0
    const zip = join(ws, "..", "copied-out.zip")
    await runtime.runPromise(Effect.ignore(rt.copyFrom(outside.file, zip)))
    const copied = existsSync(zip)
    return atMost(
      "escapes: LocalRuntime with default options reading, writing, listing or copying out an outside file",
      [read, written, listed, copied].filter(Boolean).length,
      "escapes",
      0
    )
  } finally {
    await runtime.dispose()
  }
}

/** Run `count` reads or writes of `<dir>/secret.txt` while a swapper flips `dir` between inside and outside. */
const race = async (
  rt: RuntimeShape,
  runtime: ManagedRuntime.ManagedRuntime<Runtime, unknown>,
  paths: { readonly dir: string; readonly outside: string },
  count: number,
  deadline: () => boolean,
  one: (rt: RuntimeShape) => Effect.Effect<unknown, unknown>
) => {
  const swapper = spawn("/usr/bin/python3", ["-c", SWAPPER, paths.dir, paths.outside, "120"], {
    stdio: "ignore"
  })
  let done = 0
  const seen: Array<unknown> = []
  // The swapper is racing once the link exists (Python takes a moment to start).
  for (let i = 0; i < 50 && !existsSync(`${paths.dir}.link`); i++) await sleep(20)
  try {
    // A few at once: the executor's check and open interleave with each other and with the swapper.
    await Promise.all(Array.from({ length: 4 }, async () => {
      while (done < count && !deadline()) {
        done++
        seen.push(await runtime.runPromise(one(rt)))
      }
    }))
  } finally {
    if (swapper.exitCode === null && swapper.signalCode === null) {
      swapper.kill("SIGKILL")
      await new Promise((resolve) => swapper.once("exit", resolve))
    }
    // Put the directory back wherever the swapper stopped (a write may also have made a new `dir`).
    const stash = `${paths.dir}.real`
    if (existsSync(stash)) {
      rmSync(paths.dir, { recursive: true, force: true })
      renameSync(stash, paths.dir)
    }
    rmSync(`${paths.dir}.link`, { force: true })
  }
  return seen
}

export const escapeRows = async ({ budget, quick }: GroupContext): Promise<ReadonlyArray<Row>> => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "chaos-escape-")))
  const ws = join(base, "workspace")
  const outside = join(base, "outside")
  mkdirSync(ws)
  mkdirSync(outside)
  const secret = `OUTSIDE-SECRET-${process.pid}`
  const outsideFile = join(outside, "secret.txt")
  writeFileSync(outsideFile, secret)
  writeFileSync(join(outside, `outside-name-${process.pid}`), "")
  mkdirSync(join(ws, "dir"))
  writeFileSync(join(ws, "dir", "secret.txt"), "inside")
  const runtime = ManagedRuntime.make(CliRuntime.layer({ workspace: ws, restrictToWorkspace: true }))
  const rows: Array<Row> = []
  try {
    const rt = await runtime.runPromise(Runtime)
    const target = join(ws, "dir", "secret.txt")
    const paths = { dir: join(ws, "dir"), outside }
    const share = () => budget.left() < budget.ms * 0.4

    // Racing reads: the link is inside at check time and outside at open time, some of the time.
    const reads = await race(rt, runtime, paths, quick ? 1000 : 3000, share, (r) => r.read(target))
    const leakedReads = reads.filter((o) => contentOf(o as { content?: unknown }).includes(secret)).length
    const insideReads = reads.filter((o) => contentOf(o as { content?: unknown }).includes("inside")).length
    console.log(
      `  racing reads: ${insideReads} inside, ${leakedReads} outside, ${
        reads.length - insideReads - leakedReads
      } refused`
    )
    rows.push(
      atMost(`escapes: racing symlink reads returning outside contents (of ${reads.length})`, leakedReads, "reads", 0)
    )

    const outsideBefore = readdirSync(outside).length
    const writes = await race(
      rt,
      runtime,
      paths,
      quick ? 300 : 1000,
      () => budget.left() < budget.ms * 0.2,
      (r) => r.write({ path: target, content: "WRITTEN-THROUGH-LINK" })
    )
    // A write that won the race changed the outside file, or left a new file (a temp file, a rename) beside it.
    const landed = Number(readFileSync(outsideFile, "utf8") !== secret) + readdirSync(outside).length - outsideBefore
    writeFileSync(outsideFile, secret)
    rows.push(atMost(`escapes: racing symlink writes landing outside (of ${writes.length})`, landed, "files", 0))

    // A hard link to an outside file: same inode, a path inside the workspace.
    const hard = join(ws, "hard")
    linkSync(outsideFile, hard)
    const hardRead = contentOf(await runtime.runPromise(rt.read(hard)) as { content?: unknown }).includes(secret)
    await runtime.runPromise(rt.write({ path: hard, content: "WRITTEN-THROUGH-HARD-LINK" }))
    const hardWritten = readFileSync(outsideFile, "utf8") !== secret
    writeFileSync(outsideFile, secret)
    rows.push(
      atMost(
        "escapes: hard link to an outside file read or written",
        Number(hardRead) + Number(hardWritten),
        "escapes",
        0
      )
    )

    // Zip entries through a symlinked directory, and onto a dangling link, inside the workspace.
    const hostDir = join(base, "host")
    mkdirSync(join(hostDir, "d1", "sub"), { recursive: true })
    writeFileSync(join(hostDir, "d1", "sub", "evil.txt"), "EVIL")
    mkdirSync(join(hostDir, "d2"), { recursive: true })
    writeFileSync(join(hostDir, "d2", "dangling"), "EVIL")
    mkdirSync(join(ws, "d1"))
    mkdirSync(join(ws, "d2"))
    symlinkSync(outside, join(ws, "d1", "sub"))
    symlinkSync(join(outside, "created-through-dangling-link"), join(ws, "d2", "dangling"))
    for (const dir of ["d1", "d2"]) {
      await runtime.runPromise(Effect.ignore(rt.copyTo(join(hostDir, dir), ws, { recursive: true })))
    }
    const outsideNames = readdirSync(outside)
    const planted = ["evil.txt", "created-through-dangling-link"].filter((n) => outsideNames.includes(n)).length
    rows.push(atMost("escapes: zip entries landing outside through links", planted, "files", 0))

    // A directory view must not follow a link out of the workspace (directly, or two levels down).
    symlinkSync(outside, join(ws, "peek"))
    const views = await Promise.all(
      [join(ws, "peek"), ws].map((path) => runtime.runPromise(rt.edit(new FileEditAction({ path, command: "view" }))))
    )
    const listed = views.filter((o) => contentOf(o as { content?: unknown }).includes(`outside-name-${process.pid}`))
    rows.push(atMost("escapes: directory views listing outside names", listed.length, "views", 0))
    rows.push(await serverDefaults(ws, { file: outsideFile, secret, dir: outside }))
  } finally {
    await runtime.dispose()
    rmSync(base, { recursive: true, force: true })
  }
  rows.push(...await fileViewerRows(), ...await vscodeRows(), ...await microagentLinkRows())
  return rows
}
