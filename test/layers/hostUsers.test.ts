/**
 * The host side of what other users can reach: the owner-only directory every temporary
 * workspace is made in (a directory squatted by another user, or a link, is refused; a loose one
 * of ours is tightened), a LocalRuntime workspace that another host user cannot read, and the
 * check of the host's accounts that keeps a Docker sandbox's uid off every account.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Logger, References } from "effect"
import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { InvalidOptionsError, Runtime, RuntimeStartError } from "../../src/index.ts"
import { LocalRuntime } from "../../src/local.ts"
import { scopedWorkspace, workspaceParentPath } from "../../src/runtime/hostWorkspace.ts"
import { hostHoldersOf } from "../../src/runtimeImage/hostAccounts.ts"
import { DEFAULT_SANDBOX_UID, dockerSandboxUid, unheldUid } from "../../src/runtimeImage/sandboxUser.ts"
import { asHostUser, deniedAccess, mayActAsOtherUsers, throwawayHostUser } from "../hostUsers.ts"

const actAsOthers = mayActAsOtherUsers()

/** `body` with TMPDIR pointing at a fresh directory (removed after), where the workspace parent is made. */
const withPrivateTmp = <A, E>(body: (tmp: string) => Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const tmp = mkdtempSync(join(tmpdir(), "host-users-tmp-"))
      const saved = process.env["TMPDIR"]
      process.env["TMPDIR"] = tmp
      return { tmp, saved }
    }),
    ({ tmp }) => body(tmp),
    ({ saved, tmp }) =>
      Effect.sync(() => {
        if (saved === undefined) delete process.env["TMPDIR"]
        else process.env["TMPDIR"] = saved
        rmSync(tmp, { recursive: true, force: true })
      })
  )

/** A temporary workspace made (and released) in the current TMPDIR: its failure, if any. */
const temporaryWorkspace = Effect.scoped(scopedWorkspace({}, "probe", "test options")).pipe(Effect.exit)

describe("temporary workspaces and the host's other users", () => {
  it.live.skipIf(!actAsOthers)(
    "a LocalRuntime workspace sits in the owner's 0700 directory: opened up, another host user still cannot read it",
    () =>
      Effect.gen(function*() {
        const rt = yield* Runtime
        const workspace = rt.info.workspace
        yield* rt.write({ path: join(workspace, "notes.txt"), content: "secret" })
        // The agent opens its workspace up (as `git clone` into it or a setup script might).
        yield* rt.runCommand(`chmod 0755 ${workspace}`)
        const notes = join(workspace, "notes.txt")
        assert.strictEqual(asHostUser(0, 0, ["cat", notes]).stdout, "secret\n")
        const read = asHostUser(1000, 1000, ["cat", notes])
        assert.isTrue(deniedAccess(read), `uid 1000 read the workspace: ${read.stdout}`)
        const parent = statSync(dirname(workspace))
        assert.strictEqual(dirname(workspace), workspaceParentPath())
        assert.deepStrictEqual([parent.mode & 0o777, parent.uid], [0o700, process.getuid!()])
      }).pipe(Effect.provide(LocalRuntime.layer())),
    60_000
  )

  it.live.skipIf(!actAsOthers)(
    "a parent directory another user made first is refused, and nothing is made in it",
    () =>
      withPrivateTmp(() =>
        Effect.gen(function*() {
          const parent = workspaceParentPath()
          mkdirSync(parent, { mode: 0o777 })
          chownSync(parent, 1000, 1000)
          const exit = yield* temporaryWorkspace
          assert.deepStrictEqual(
            exit,
            Exit.fail(
              new RuntimeStartError({
                message: `Cannot make the private directory of temporary workspaces: ${parent} belongs to uid 1000, ` +
                  `not to this user (uid ${process.getuid!()}): whoever made it could enter every workspace made in ` +
                  "it. Remove it, or point TMPDIR elsewhere"
              })
            )
          )
          assert.deepStrictEqual(readdirSync(parent), [])
        })
      )
  )

  it.live("a parent that is a link is refused; a loose one of ours is tightened to 0700", () =>
    withPrivateTmp((tmp) =>
      Effect.gen(function*() {
        const parent = workspaceParentPath()
        mkdirSync(join(tmp, "elsewhere"))
        symlinkSync(join(tmp, "elsewhere"), parent)
        assert.deepStrictEqual(
          yield* temporaryWorkspace,
          Exit.fail(
            new RuntimeStartError({
              message: `Cannot make the private directory of temporary workspaces: ${parent} is not a directory`
            })
          )
        )
        assert.deepStrictEqual(readdirSync(join(tmp, "elsewhere")), [])
        rmSync(parent)
        mkdirSync(parent)
        chmodSync(parent, 0o755)
        assert.isTrue(Exit.isSuccess(yield* temporaryWorkspace))
        assert.strictEqual(statSync(parent).mode & 0o777, 0o700)
        // Released: nothing left but the parent, kept for the next workspace.
        assert.deepStrictEqual(readdirSync(parent), [])
      })
    ))
})

describe("the sandbox uid and the host's accounts", () => {
  it.live.skipIf(!actAsOthers)(
    "an account's uid or gid is named as taken, and refused as a sandbox uid naming the option",
    () =>
      Effect.gen(function*() {
        const user = yield* throwawayHostUser
        const named = [`user ${user.name} (passwd)`, `group ${user.name} (group)`]
        assert.deepStrictEqual(hostHoldersOf(user.uid, user.gid), named)
        // Without getent (not a glibc host), the files themselves.
        const path = process.env["PATH"]
        process.env["PATH"] = ""
        try {
          assert.deepStrictEqual(hostHoldersOf(user.uid, user.gid), named)
        } finally {
          process.env["PATH"] = path
        }
        const refused = yield* Effect.flip(unheldUid(user.uid, "DockerRuntime options", "userId"))
        const holders = hostHoldersOf(user.uid, user.uid).join(", ")
        assert.deepStrictEqual(
          refused,
          new InvalidOptionsError({
            message: `Invalid DockerRuntime options: userId: the sandbox uid/gid ${user.uid} belongs to ${holders} ` +
              "on this host, who could read the sandboxes' processes and files: give userId a number that no " +
              "account of this host has."
          })
        )
        // Given explicitly, it is the owner's choice: kept, with a warning naming the account.
        const lines: Array<string> = []
        const uid = yield* dockerSandboxUid(user.uid, true).pipe(
          Effect.provideService(
            References.CurrentLoggers,
            new Set([Logger.make((o) => void lines.push(String(o.message)))])
          )
        )
        assert.strictEqual(uid, user.uid)
        assert.match(
          lines.join("\n"),
          new RegExp(`sandbox uid/gid ${user.uid} \\(userId\\) belongs to user ${user.name}`)
        )
        // Root's default is the unheld uid; a remote engine's host is not looked at.
        assert.strictEqual(yield* dockerSandboxUid(undefined, true), DEFAULT_SANDBOX_UID)
        assert.strictEqual(yield* dockerSandboxUid(undefined, false), DEFAULT_SANDBOX_UID)
        assert.deepStrictEqual(hostHoldersOf(DEFAULT_SANDBOX_UID, DEFAULT_SANDBOX_UID), [])
      }),
    30_000
  )

  it("subordinate ranges (rootless Docker's, Podman's) count as holders", () => {
    const dir = mkdtempSync(join(tmpdir(), "subordinate-"))
    try {
      const uids = join(dir, "subuid")
      const gids = join(dir, "subgid")
      writeFileSync(uids, "alice:100000:65536\n# a comment\nbob:165536:65536\n")
      writeFileSync(gids, "alice:100000:65536\n")
      const holders = (id: number) => hostHoldersOf(id, id, { uids, gids }).filter((h) => h.includes("subordinate"))
      assert.deepStrictEqual(holders(165535), [
        `alice's subordinate ids 100000-165535 (${uids})`,
        `alice's subordinate ids 100000-165535 (${gids})`
      ])
      assert.deepStrictEqual(holders(165536), [`bob's subordinate ids 165536-231071 (${uids})`])
      assert.deepStrictEqual(holders(99999), [])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
