/**
 * Snapshots and fork in the Promise API (`effect-sandbox/promise`), on one DockerRuntime sandbox:
 * a kept snapshot is listed and removed through `Sandbox.listSnapshots`/`removeSnapshot`; a fork's
 * copies start from the same files, diverge, share one lifetime (closing one closes both), and
 * inherit `keepWorkspace` (their temporary workspaces stay, as the source's does); a runtime
 * without snapshots rejects with the typed error.
 */
import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { Sandbox, SandboxError } from "../../src/promise.ts"
import { hostWorkspace, removeLeftovers, sessionContainers, sessionId } from "../docker/helpers.ts"
import { baseImage, describeDocker } from "../docker/infra.ts"

const FILE = "promise-snapshot"

/** The rejection of a promise that must reject. */
const rejection = async (promise: Promise<unknown>): Promise<SandboxError> => {
  try {
    await promise
  } catch (error) {
    assert.instanceOf(error, SandboxError)
    return error
  }
  return assert.fail("expected a rejection")
}

describeDocker("Promise API: snapshot and fork (DockerRuntime)", () => {
  it(
    "a kept snapshot is listed and removed; a fork's copies diverge, close together, keep their workspaces",
    async () => {
      const session = sessionId(FILE)
      const sandbox = await Sandbox.create("docker", {
        baseImage: baseImage(),
        sessionId: session,
        keepWorkspace: true
      })
      const kept: Array<string> = []
      try {
        kept.push(await Effect.runPromise(hostWorkspace(session)))
        await sandbox.files.write("start.txt", "the starting state")

        const snapshot = await sandbox.snapshot({ keep: true })
        assert.deepInclude(snapshot, { provider: "Docker", keeps: "files", kept: true, sessionId: session })
        assert.include((await Sandbox.listSnapshots("docker")).map((s) => s.id), snapshot.id)

        const [a, b] = await sandbox.fork(2)
        for (const copy of [a!, b!]) {
          assert.strictEqual(await copy.files.read("start.txt"), "the starting state")
          kept.push(await Effect.runPromise(hostWorkspace(copy.info.id)))
        }
        await a!.files.write("start.txt", "a")
        assert.strictEqual(await b!.files.read("start.txt"), "the starting state")
        assert.strictEqual((await sandbox.commands.run("cat start.txt")).stdout, "the starting state")

        await a!.close()
        const closed = await rejection(b!.files.read("start.txt"))
        assert.strictEqual(closed._tag, "RuntimeDisconnectedError")
        assert.deepStrictEqual([...sessionContainers(a!.info.id), ...sessionContainers(b!.info.id)], [])
        await b!.close()

        await sandbox.close()
        // keepWorkspace: the source's temporary workspace stays, and so do its copies', with their files.
        assert.strictEqual(readFileSync(join(kept[1]!, "start.txt"), "utf8"), "a")
        assert.isTrue(kept.every((dir) => existsSync(dir)))

        assert.include((await Sandbox.listSnapshots("docker")).map((s) => s.id), snapshot.id)
        await Sandbox.removeSnapshot("docker", snapshot)
        assert.notInclude((await Sandbox.listSnapshots("docker")).map((s) => s.id), snapshot.id)

        const none = await rejection(Sandbox.listSnapshots("cli"))
        assert.strictEqual(none._tag, "RuntimeSnapshotError")
        assert.strictEqual(none.message, "cli keeps no snapshots (docs/snapshots.md).")
      } finally {
        await sandbox.close()
        for (const dir of kept) rmSync(dir, { recursive: true, force: true })
        removeLeftovers(FILE)
      }
    },
    120_000
  )
})
