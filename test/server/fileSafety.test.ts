/**
 * Special files and the workspace boundary through the real transports (issue 9, items 3 and 5):
 * the action server over HTTP (unrestricted, as in a container) and CliRuntime (in process,
 * restricted). The file-level cases are in test/executor/fileSafety.test.ts.
 */
import { assert, describe, it as vitestIt, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { spawn } from "node:child_process"
import { linkSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  CliRuntime,
  ErrorObservation,
  FileEditAction,
  FileReadAction,
  FileReadObservation,
  Runtime
} from "../../src/index.ts"
import { call, json, postJson, run, serverLayer, TestServer, type TestServerShape } from "./helpers.ts"

const refusal = (path: string, kind: string) =>
  `Cannot act on ${path}: it is ${kind}. File actions only work on regular files and directories.`

/** POST one action; its observation JSON, and how long the answer took. */
const execute = (server: TestServerShape, action: string, args: Record<string, unknown>) =>
  Effect.gen(function*() {
    const started = Date.now()
    const reply = yield* postJson(server, "/execute_action", { action: { action, args } })
    assert.strictEqual(reply.status, 200, reply.text)
    return { obs: json(reply), ms: Date.now() - started }
  })

/** A writer that holds `fifo` open and never writes, SIGKILLed (by its pid) after the test. */
const silentWriter = (fifo: string) =>
  Effect.acquireRelease(
    Effect.sync(() => spawn("sh", ["-c", "exec 3>\"$0\"; sleep 60", fifo], { stdio: "ignore" })),
    (child) => Effect.sync(() => child.kill("SIGKILL"))
  )

layer(serverLayer(), { excludeTestServices: true })("action server: special files over HTTP", (it) => {
  it.effect("reading /dev/zero answers an ErrorObservation at once and the server stays up", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { ms, obs } = yield* execute(server, "read", { path: "/dev/zero" })
      assert.strictEqual(obs.observation, "error")
      assert.strictEqual(obs.content, refusal("/dev/zero", "a character device"))
      assert.isBelow(ms, 1_000)
      const viewed = yield* execute(server, "edit", { command: "view", path: "/dev/zero", impl_source: "oh_aci" })
      assert.strictEqual(viewed.obs.content, `ERROR:\n${refusal("/dev/zero", "a character device")}`)
      assert.strictEqual((yield* call(server, "/alive")).status, 200)
    }))

  it.effect("five reads of a FIFO with a silent writer each answer in under a second; the session still works", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const fifo = join(server.workspace, "fifo")
      assert.strictEqual((yield* run(server, `mkfifo ${fifo}`)).extras.metadata.exit_code, 0)
      for (let i = 0; i < 5; i++) {
        const { ms, obs } = yield* execute(server, "read", { path: fifo })
        assert.strictEqual(obs.observation, "error")
        assert.strictEqual(obs.content, refusal(fifo, "a FIFO (named pipe)"))
        assert.isBelow(ms, 1_000)
      }
      yield* silentWriter(fifo)
      for (let i = 0; i < 5; i++) {
        const read = yield* execute(server, "read", { path: "fifo" })
        assert.strictEqual(read.obs.content, refusal(fifo, "a FIFO (named pipe)"))
        assert.isBelow(read.ms, 1_000)
        const viewed = yield* execute(server, "edit", { command: "view", path: fifo, impl_source: "oh_aci" })
        assert.strictEqual(viewed.obs.content, `ERROR:\n${refusal(fifo, "a FIFO (named pipe)")}`)
        assert.isBelow(viewed.ms, 1_000)
      }
      const write = yield* execute(server, "write", { path: fifo, content: "x" })
      assert.strictEqual(write.obs.content, refusal(fifo, "a FIFO (named pipe)"))
      // Every file action still works.
      yield* execute(server, "write", { path: "plain.txt", content: "ok" })
      const { obs } = yield* execute(server, "read", { path: "plain.txt" })
      assert.strictEqual(obs.observation, "read")
      assert.strictEqual(obs.content, "ok\n")
      assert.strictEqual((yield* run(server, "echo alive")).content, "alive")
    }))
})

describe("CliRuntime (restricted, in process)", () => {
  vitestIt.live(
    "refuses a FIFO, a hard link to an outside file and a directory link out of the workspace",
    () =>
      Effect.gen(function*() {
        const rt = yield* Runtime
        const ws = rt.info.workspace
        const outside = yield* Effect.acquireRelease(
          Effect.sync(() => realpathSync(mkdtempSync(join(tmpdir(), "file-safety-out-")))),
          (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
        )
        writeFileSync(join(outside, "secret.txt"), "SECRET")
        linkSync(join(outside, "secret.txt"), join(ws, "hl"))
        symlinkSync(outside, join(ws, "out"))
        yield* rt.runCommand(`mkfifo ${ws}/fifo`)
        yield* silentWriter(join(ws, "fifo"))

        const started = Date.now()
        const fifo = yield* rt.read(`${ws}/fifo`)
        assert.instanceOf(fifo, ErrorObservation)
        assert.strictEqual(fifo.content, refusal(`${ws}/fifo`, "a FIFO (named pipe)"))
        assert.isBelow(Date.now() - started, 1_000)

        const hardLink = yield* rt.read(`${ws}/hl`)
        assert.instanceOf(hardLink, ErrorObservation)
        assert.include(hardLink.content, `Cannot act on ${ws}/hl: it has 2 hard links.`)

        const listing = yield* rt.edit(new FileEditAction({ command: "view", path: ws }))
        assert.include(listing.content.split("\n"), `${ws}/out`)
        assert.notInclude(listing.content, "secret.txt")

        const viewed = yield* rt.read(new FileReadAction({ path: `${ws}/hl`, implSource: "oh_aci" }))
        assert.instanceOf(viewed, FileReadObservation)
        assert.notInclude(viewed.content, "SECRET")
      }).pipe(Effect.provide(Layer.fresh(CliRuntime.layer())))
  )
})
