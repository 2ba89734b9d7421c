/**
 * The owner's records of its containers (leaseRecords.ts), no engine needed: a claim holds only
 * for exactly the container and temporary workspace the owner recorded, in a lease directory
 * where and as whom the owner makes it (directly in the temp dir, a real directory, our user's).
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { LABEL } from "../../src/engines/docker/labels.ts"
import { LEASE_DIR_PREFIX } from "../../src/providers/docker/leaseDir.ts"
import { claimOf, isOwnLeaseDir, recordContainer } from "../../src/providers/docker/leaseRecords.ts"

const made: Array<string> = []
afterAll(() => made.forEach((path) => rmSync(path, { recursive: true, force: true })))

describe("lease records", () => {
  it.effect("record exactly the container and workspace named, in a lease directory of our own", () =>
    Effect.gen(function*() {
      // As the owner makes it: in tmpdir() as it is spelled, not resolved.
      const lease = mkdtempSync(join(tmpdir(), LEASE_DIR_PREFIX))
      made.push(lease)
      assert.isTrue(isOwnLeaseDir(lease))
      yield* recordContainer(lease, "effect-sandbox-a", "/tmp/effect-sandbox-docker-a")
      yield* recordContainer(lease, "effect-sandbox-b", undefined)
      const claim = (name: string, workspace: string, more: Record<string, string> = {}) =>
        claimOf(name, { [LABEL.ownerLease]: lease, [LABEL.temporaryWorkspace]: workspace, ...more })
      assert.deepStrictEqual(claim("effect-sandbox-a", "/tmp/effect-sandbox-docker-a"), {
        dir: lease,
        workspace: "/tmp/effect-sandbox-docker-a"
      })
      assert.deepStrictEqual(claim("effect-sandbox-b", ""), { dir: lease, workspace: undefined })
      // Another workspace, a name the owner never made, or a kept-alive one is no claim.
      assert.isNull(claim("effect-sandbox-a", "/home"))
      assert.isNull(claim("effect-sandbox-a", ""))
      assert.isNull(claim("effect-sandbox-b", "/tmp/effect-sandbox-docker-a"))
      assert.isNull(claim("effect-sandbox-c", ""))
      assert.isNull(claim("effect-sandbox-b", "", { [LABEL.keepAlive]: "true" }))
      assert.isNull(claimOf("effect-sandbox-b", {}))
      // Neither name nor path is readable in the directory the containers see.
      for (const entry of readdirSync(lease)) assert.match(entry, /^container-[0-9a-f]{64}$/)

      // Not ours: elsewhere than directly in the temp dir, another name, a link.
      const elsewhere = mkdtempSync(join(tmpdir(), "effect-sandbox-docker-"))
      made.push(elsewhere)
      const nested = join(elsewhere, `${LEASE_DIR_PREFIX}x`)
      mkdirSync(nested)
      const link = join(tmpdir(), `${LEASE_DIR_PREFIX}link-${process.pid}`)
      symlinkSync(lease, link)
      made.push(link)
      for (const path of [nested, elsewhere, link, join(tmpdir(), LEASE_DIR_PREFIX)]) {
        assert.isFalse(isOwnLeaseDir(path), path)
      }
      // Nor another user's (root's reaper never acts for another user): tried where we may chown.
      if (process.getuid?.() === 0) {
        const theirs = mkdtempSync(join(tmpdir(), LEASE_DIR_PREFIX))
        made.push(theirs)
        chownSync(theirs, 1000, 1000)
        assert.isFalse(isOwnLeaseDir(theirs))
      }
    }))
})
