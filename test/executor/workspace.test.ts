import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as nodePath from "node:path"
import { Workspace, WorkspaceViolation } from "../../src/executor/workspace.ts"

/** A fresh directory holding `ws/` (the workspace), `ws2/` (a sibling) and `out/` (outside); removed after the test. */
const layout = Effect.acquireRelease(
  Effect.promise(async () => {
    const base = await fs.realpath(await fs.mkdtemp(nodePath.join(os.tmpdir(), "workspace-test-")))
    for (const dir of ["ws/sub", "ws2", "out"]) await fs.mkdir(nodePath.join(base, dir), { recursive: true })
    return { base, root: nodePath.join(base, "ws"), outside: nodePath.join(base, "out") }
  }),
  ({ base }) => Effect.promise(() => fs.rm(base, { recursive: true, force: true }))
)

const violation = (effect: Effect.Effect<string, WorkspaceViolation>) =>
  Effect.flip(effect).pipe(Effect.map((error) => {
    assert.instanceOf(error, WorkspaceViolation)
    return error.message
  }))

describe("Workspace.resolve", () => {
  it.effect("maps the mount path onto the root and joins relative paths to cwd", () =>
    Effect.gen(function*() {
      const { root } = yield* layout
      const ws = new Workspace({ root, mountPath: "/workspace", restricted: true })
      assert.strictEqual(yield* ws.resolve("/workspace", "/"), root)
      assert.strictEqual(yield* ws.resolve("/workspace/sub/new.txt", "/"), `${root}/sub/new.txt`)
      assert.strictEqual(yield* ws.resolve("new/deeper/file.txt", `${root}/sub`), `${root}/sub/new/deeper/file.txt`)
      assert.strictEqual(yield* ws.resolve(`${root}/sub`, "/"), `${root}/sub`)
      // "/workspace2" is not under the mount path
      assert.strictEqual(
        yield* violation(ws.resolve("/workspace2/x", root)),
        `Invalid path: /workspace2/x. You can only work with files in ${root}.`
      )
    }))

  it.effect("refuses absolute paths outside the root, segment-aware", () =>
    Effect.gen(function*() {
      const { base, root } = yield* layout
      const ws = new Workspace({ root, mountPath: "/workspace", restricted: true })
      assert.strictEqual(
        yield* violation(ws.resolve("/etc/passwd", root)),
        `Invalid path: /etc/passwd. You can only work with files in ${root}.`
      )
      assert.strictEqual(
        yield* violation(ws.resolve(`${base}/ws2/x.txt`, root)),
        `Invalid path: ${base}/ws2/x.txt. You can only work with files in ${root}.`
      )
    }))

  it.effect("refuses paths that resolve outside through `..` or symlinks", () =>
    Effect.gen(function*() {
      const { base, outside, root } = yield* layout
      yield* Effect.promise(() => fs.symlink(outside, `${root}/escape`))
      yield* Effect.promise(() => fs.symlink(`${outside}/not-yet.txt`, `${root}/dangling`))
      const ws = new Workspace({ root, mountPath: "/workspace", restricted: true })
      assert.strictEqual(
        yield* violation(ws.resolve("/workspace/../out/x", root)),
        `Invalid path traversal: /workspace/../out/x. Path resolves outside the workspace. Resolved: ${outside}/x, Workspace: ${root}`
      )
      assert.strictEqual(
        yield* violation(ws.resolve("/workspace/escape/secret.txt", root)),
        `Invalid path traversal: /workspace/escape/secret.txt. Path resolves outside the workspace. Resolved: ${outside}/secret.txt, Workspace: ${root}`
      )
      assert.strictEqual(
        yield* violation(ws.resolve("dangling", root)),
        `Invalid path traversal: dangling. Path resolves outside the workspace. Resolved: ${outside}/not-yet.txt, Workspace: ${root}`
      )
      assert.strictEqual(
        yield* violation(ws.resolve("../ws2", root)),
        `Invalid path traversal: ../ws2. Path resolves outside the workspace. Resolved: ${base}/ws2, Workspace: ${root}`
      )
    }))

  it.effect("follows symlinks that stay inside", () =>
    Effect.gen(function*() {
      const { root } = yield* layout
      yield* Effect.promise(() => fs.symlink(`${root}/sub`, `${root}/alias`))
      const ws = new Workspace({ root, mountPath: "/workspace", restricted: true })
      assert.strictEqual(yield* ws.resolve("/workspace/alias/f.txt", root), `${root}/sub/f.txt`)
    }))

  it.effect("allows the extra directories", () =>
    Effect.gen(function*() {
      const { outside, root } = yield* layout
      const ws = new Workspace({ root, mountPath: "/workspace", restricted: true, extraAllowed: [outside] })
      assert.strictEqual(yield* ws.resolve(`${outside}/report.md`, root), `${outside}/report.md`)
    }))

  it.effect("only maps and joins when not restricted", () =>
    Effect.gen(function*() {
      const { outside, root } = yield* layout
      yield* Effect.promise(() => fs.symlink(outside, `${root}/escape`))
      const ws = new Workspace({ root, mountPath: "/workspace", restricted: false })
      assert.strictEqual(yield* ws.resolve("/etc/passwd", root), "/etc/passwd")
      assert.strictEqual(yield* ws.resolve("/workspace/escape/x", root), `${root}/escape/x`)
      assert.strictEqual(yield* ws.resolve("../out/x", root), `${outside}/x`)
    }))

  it.effect("works when the mount path is the root itself", () =>
    Effect.gen(function*() {
      const { root } = yield* layout
      const ws = new Workspace({ root, mountPath: root, restricted: true })
      assert.strictEqual(yield* ws.resolve(`${root}/sub/a`, "/"), `${root}/sub/a`)
    }))

  it.effect("locate gives the boundary opened files are checked against: the real allowed directories", () =>
    Effect.gen(function*() {
      const { base, outside, root } = yield* layout
      yield* Effect.promise(() => fs.symlink(root, `${base}/ws-link`))
      const ws = new Workspace({
        root: `${base}/ws-link`,
        mountPath: "/workspace",
        restricted: true,
        extraAllowed: [outside]
      })
      const located = yield* ws.locate("/workspace/sub/a", "/")
      assert.strictEqual(located.path, `${root}/sub/a`)
      assert.deepStrictEqual(located.boundary?.allowed, [root, outside])
      assert.strictEqual(
        located.boundary?.outside("/etc/passwd"),
        `Invalid path traversal: /workspace/sub/a. Path resolves outside the workspace. Resolved: /etc/passwd, Workspace: ${base}/ws-link`
      )
      const open = new Workspace({ root, mountPath: "/workspace", restricted: false })
      assert.deepStrictEqual(yield* open.locate("/workspace/sub/a", "/"), {
        path: `${root}/sub/a`,
        boundary: undefined
      })
    }))
})
