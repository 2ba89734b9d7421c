/**
 * The hosted server start's guard against a copy sent again (src/hosted/startOnce.ts), run in a
 * real `sh`: the first copy runs the command, a copy after it ends with 75 having run nothing, and
 * a first copy that found no server in the image (78) leaves the next copy free to look again.
 */
import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { claimPath, startedOnce, STOOD_DOWN } from "../../src/hosted/startOnce.ts"

/** Run a shell line as Runloop's shell would; its exit status. */
const run = (line: string) => spawnSync("sh", ["-c", line], { stdio: "ignore" }).status

describe("a hosted server start, sent twice", () => {
  it("runs the command in the first copy only; a copy after it stands down with 75", () => {
    const dir = mkdtempSync(join(tmpdir(), "start-once-"))
    const claim = randomBytes(8).toString("hex")
    try {
      const line = startedOnce(`echo ran >> ${join(dir, "log")}; exit 3`, claim)
      assert.strictEqual(run(line), 3)
      assert.strictEqual(run(line), STOOD_DOWN)
      assert.strictEqual(readFileSync(join(dir, "log"), "utf8"), "ran\n")
      // Another launch (another claim) is not held back by this one.
      assert.strictEqual(run(startedOnce("exit 0")), 0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
      rmSync(claimPath(claim), { recursive: true, force: true })
    }
  })

  it("gives the claim back when the image has no server (78), so the next copy looks again", () => {
    const claim = randomBytes(8).toString("hex")
    const line = startedOnce("exit 78", claim)
    assert.strictEqual(run(line), 78)
    assert.isFalse(existsSync(claimPath(claim)))
    assert.strictEqual(run(line), 78)
    assert.isFalse(existsSync(claimPath(claim)))
  })
})
