/**
 * The checks before the one `rm -rf` the Docker runtime runs on the host (workspaceRemoval.ts), on
 * real directories and links, no engine needed: only a real directory of ours inside the temp dir
 * is removed, never a path outside it, a link, or a directory reached through one, and the
 * removal does not follow the links inside it.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { removeTemporaryWorkspace, workspaceVerdict } from "../../src/providers/docker/workspaceRemoval.ts"

const made: Array<string> = []
/** A directory in `parent` named `<prefix>XXXXXX`, removed after the file's tests. */
const dir = (parent: string, prefix: string) => {
  const path = realpathSync(mkdtempSync(join(parent, prefix)))
  made.push(path)
  return path
}
afterAll(() => made.forEach((path) => rmSync(path, { recursive: true, force: true })))

const tmp = () => realpathSync(tmpdir())

describe("temporary workspace removal", () => {
  it("refuses every path that is not a real directory of ours inside the temp dir", () => {
    const ours = dir(tmp(), "effect-sandbox-docker-")
    const decoy = dir(tmp(), "decoy-")
    const viaLink = join(tmp(), `effect-sandbox-link-${process.pid}`)
    symlinkSync(ours, viaLink)
    made.push(viaLink)
    const linkToDecoy = join(ours, "to-decoy")
    symlinkSync(decoy, linkToDecoy)
    const file = join(ours, "file")
    writeFileSync(file, "")
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["/", "not a normal absolute path"],
      ["/etc", "not under"],
      [tmp(), "not under"],
      [decoy, "not under"],
      ["relative/effect-sandbox-x", "not a normal absolute path"],
      [`${ours}/../${decoy.slice(tmp().length + 1)}`, "not a normal absolute path"],
      [`${ours}/`, "not a normal absolute path"],
      [viaLink, "not a directory (a link, or a file)"],
      [linkToDecoy, "not a directory (a link, or a file)"],
      [file, "not a directory (a link, or a file)"],
      [join(viaLink, "sub"), "reached through a link"]
    ]
    mkdirSync(join(ours, "sub"))
    for (const [path, reason] of cases) {
      const verdict = workspaceVerdict(path)
      assert.strictEqual(verdict._tag, "Refuse", path)
      assert.include((verdict as { readonly reason: string }).reason, reason, path)
    }
    assert.deepStrictEqual(workspaceVerdict(ours), { _tag: "Remove" })
    assert.deepStrictEqual(workspaceVerdict(join(ours, "sub")), { _tag: "Remove" })
    assert.deepStrictEqual(workspaceVerdict(join(tmp(), "effect-sandbox-never-made")), { _tag: "Gone" })
  })

  it.effect("removes a workspace of ours without following the links inside it, and leaves a refused one", () =>
    Effect.gen(function*() {
      const ours = dir(tmp(), "effect-sandbox-docker-")
      const decoy = dir(tmp(), "decoy-")
      writeFileSync(join(decoy, "keep"), "kept")
      symlinkSync(decoy, join(ours, "to-decoy"))
      yield* removeTemporaryWorkspace(decoy)
      assert.isTrue(existsSync(join(decoy, "keep")), "a path outside ours was removed")
      yield* removeTemporaryWorkspace(ours)
      assert.isFalse(existsSync(ours))
      assert.deepStrictEqual(readdirSync(decoy), ["keep"], "the removal followed a link out of the workspace")
    }))
})
