import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Scope, Stream } from "effect"
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { cgroupsAvailable } from "../../src/executor/shell/cgroup.ts"
import { CmdRunAction, Runtime, RuntimeDisconnectedError, type RuntimeShape } from "../../src/index.ts"
import { LocalRuntime } from "../../src/local.ts"
import { chromiumAvailable } from "../conformance/chromium.ts"
import { kernelAvailable } from "../conformance/kernel.ts"
import { required } from "../conformance/requirement.ts"
import { eventually } from "../eventually.ts"
import { assertKeyHidden, envDumpingMcpServer } from "./sandboxEnvProbe.ts"

const cgroups = required(cgroupsAvailable(), {
  ci: "CI must be able to create cgroups (root, writable /sys/fs/cgroup).",
  skipped: "Skipping LocalRuntime's cgroup case: this process cannot create cgroups (needs root)."
})

/** The server LocalRuntime runs from this checkout: its payload, built from the sources. */
const SERVER = join(import.meta.dirname, "..", "..", "payload", "server.mjs")

/** Host processes whose command line mentions `text` (server processes carry their workspace in argv). */
const processesWith = (text: string) =>
  spawnSync("pgrep", ["-af", text], { encoding: "utf8" }).stdout.split("\n").filter((l) => l.includes(SERVER))

/** Build `layer` in its own scope, so a test can release it at a chosen moment. */
const buildRuntime = (layer: Layer.Layer<Runtime, unknown, never>) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(layer, scope)
    return { rt: Context.get(context, Runtime), release: Scope.close(scope, Exit.void) }
  })

const serverPid = (rt: RuntimeShape) =>
  Number(
    spawnSync("pgrep", ["-f", "--", `--working-dir ${rt.info.workspace}`], { encoding: "utf8" }).stdout.trim().split(
      "\n"
    )[0]
  )

describe("LocalRuntime", () => {
  it.live("stops its server and removes its workspace on release", () =>
    Effect.gen(function*() {
      const { release, rt } = yield* buildRuntime(LocalRuntime.layer())
      assert.strictEqual(rt.info.kind, "local")
      assert.match(rt.info.urls["actionServer"]!, /^http:\/\/127\.0\.0\.1:\d+$/)
      assert.lengthOf(processesWith(rt.info.workspace), 1)
      yield* release
      assert.deepStrictEqual(processesWith(rt.info.workspace), [])
      assert.isFalse(spawnSync("test", ["-e", rt.info.workspace]).status === 0)
    }))

  it.live("its server keeps V8's compile cache in the user's cache dir, out of its shells' environment", () =>
    Effect.gen(function*() {
      const cache = mkdtempSync(join(tmpdir(), "local-xdg-cache-"))
      const before = process.env["XDG_CACHE_HOME"]
      process.env["XDG_CACHE_HOME"] = cache
      const built = yield* buildRuntime(LocalRuntime.layer()).pipe(
        Effect.ensuring(Effect.sync(() => {
          if (before === undefined) delete process.env["XDG_CACHE_HOME"]
          else process.env["XDG_CACHE_HOME"] = before
        }))
      )
      // Saved as the server listens, so before READY: one directory per Node version and user.
      const dirs = readdirSync(join(cache, "effect-sandbox", "compile-cache"))
      assert.lengthOf(dirs, 1)
      assert.match(dirs[0]!, new RegExp(`^${process.version}-${process.arch}-[0-9a-f]+-${process.getuid!()}$`))
      assert.isAbove(readdirSync(join(cache, "effect-sandbox", "compile-cache", dirs[0]!)).length, 0)
      const seen = yield* built.rt.runCommand(
        new CmdRunAction({ command: "echo ${EFFECT_SANDBOX_COMPILE_CACHE-unset}", blocking: true })
      )
      assert.strictEqual(seen.content, "unset")
      yield* built.release
      rmSync(cache, { recursive: true, force: true })
    }))

  it.live("a server killed mid-action becomes a typed error and ERROR_RUNTIME_DISCONNECTED", () =>
    Effect.gen(function*() {
      const { release, rt } = yield* buildRuntime(LocalRuntime.layer())
      const statuses = yield* rt.status.pipe(
        Stream.takeUntil((s) => s === "ERROR_RUNTIME_DISCONNECTED"),
        Stream.runCollect,
        Effect.forkDetach
      )
      const running = yield* Effect.forkChild(rt.run(new CmdRunAction({ command: "sleep 30", blocking: true })))
      yield* Effect.sleep("300 millis")
      process.kill(serverPid(rt), "SIGKILL")
      const error = yield* Effect.flip(Fiber.join(running))
      assert.instanceOf(error, RuntimeDisconnectedError)
      assert.include(error.message, "start a new runtime")
      assert.deepStrictEqual(
        yield* Fiber.join(statuses),
        ["STARTING_RUNTIME", "RUNTIME_STARTED", "READY", "ERROR_RUNTIME_DISCONNECTED"]
      )
      const next = yield* Effect.flip(rt.runCommand("echo again"))
      assert.instanceOf(next, RuntimeDisconnectedError)
      yield* release
      // The killed server's shell (and its sleep) were reaped on release.
      assert.deepStrictEqual(spawnSync("pgrep", ["-f", "^sleep 30$"], { encoding: "utf8" }).stdout.trim(), "")
    }))

  it.live(
    "the session key is visible to no sandboxed process: shell, /proc environ, kernel, Chromium, MCP server",
    () =>
      Effect.gen(function*() {
        const kernel = kernelAvailable()
        const browser = chromiumAvailable()
        const dir = mkdtempSync(join(tmpdir(), "local-key-"))
        const mcpEnvFile = join(dir, "mcp-env")
        const { release, rt } = yield* buildRuntime(LocalRuntime.layer({
          ipython: kernel && { agentSkills: false },
          browser,
          mcp: { stdio: [envDumpingMcpServer(mcpEnvFile)] }
        }))
        yield* assertKeyHidden(rt, { serverPid: serverPid(rt), kernel, browser, mcpEnvFile }).pipe(
          Effect.ensuring(Effect.andThen(release, Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
        )
      }),
    60_000
  )

  it.live.skipIf(!cgroups)(
    "release of a SIGKILLed server kills its shells' cgroups, escaped daemons included",
    () =>
      Effect.gen(function*() {
        const { release, rt } = yield* buildRuntime(LocalRuntime.layer())
        const seconds = `${800 + Math.floor(Math.random() * 99)}.${process.pid}`
        // Double-forked, no marker, own session: only the shell's cgroup still holds it.
        yield* rt.runCommand(`(env -i setsid sh -c 'sleep ${seconds} >/dev/null 2>&1 < /dev/null &' &)`)
        const cgroupDirs = () =>
          ["/sys/fs/cgroup/pids", "/sys/fs/cgroup/unified", "/sys/fs/cgroup"]
            .map((root) => `${root}/effect-sandbox/${rt.info.id}`)
            .filter((dir) => existsSync(dir))
        assert.isNotEmpty(cgroupDirs())
        process.kill(serverPid(rt), "SIGKILL")
        yield* release
        assert.deepStrictEqual(spawnSync("pgrep", ["-f", `sleep ${seconds}`], { encoding: "utf8" }).stdout.trim(), "")
        assert.deepStrictEqual(cgroupDirs(), [])
      })
  )

  it.live("a server that cannot start is a RuntimeStartError with its stderr", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(buildRuntime(LocalRuntime.layer({ serverEntry: "/nonexistent/server.mjs" })))
      assert.strictEqual((error as { _tag: string })._tag, "RuntimeStartError")
      assert.include((error as Error).message, "exited (code 1) before listening")
      assert.include((error as Error).message, "Cannot find module")
    }))

  it.live("attaching where nothing listens fails with a clear RuntimeStartError", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        buildRuntime(LocalRuntime.connect({ url: "http://127.0.0.1:1", aliveTimeout: "300 millis" }))
      )
      assert.strictEqual((error as { _tag: string })._tag, "RuntimeStartError")
      assert.include((error as Error).message, "did not answer /alive within 300ms")
    }))

  it.live("attach connects to a running server and leaves it running on release", () =>
    Effect.gen(function*() {
      const owner = yield* buildRuntime(LocalRuntime.layer())
      yield* owner.rt.runCommand("export FROM_OWNER=yes")
      // The owner's session key is private to it, so attach through a keyless server instead.
      const attached = yield* buildRuntime(LocalRuntime.connect({ url: owner.rt.info.urls["actionServer"]! }))
      const denied = yield* Effect.flip(attached.rt.runCommand("echo $FROM_OWNER"))
      assert.strictEqual(denied._tag, "RuntimeRequestError")
      assert.include(denied.message, "Invalid API Key")
      yield* attached.release
      assert.lengthOf(processesWith(owner.rt.info.workspace), 1)
      yield* owner.release
    }))

  it.live("a warm pool hands out ready servers, refills, and stops the rest on release", () =>
    Effect.gen(function*() {
      const poolScope = yield* Scope.make()
      const pool = yield* Layer.buildWithScope(LocalRuntime.layerPool({ poolSize: 2 }), poolScope)
      const warm = LocalRuntime.layerWarm().pipe(Layer.provide(Layer.succeedContext(pool)))
      yield* Effect.sleep("3 seconds") // let both warm servers start
      const first = yield* buildRuntime(warm)
      const second = yield* buildRuntime(warm)
      assert.notStrictEqual(first.rt.info.workspace, second.rt.info.workspace)
      assert.strictEqual((yield* first.rt.runCommand("echo warm")).content, "warm")
      assert.strictEqual((yield* second.rt.runCommand("pwd")).content, second.rt.info.workspace)
      yield* first.release
      assert.deepStrictEqual(processesWith(first.rt.info.workspace), [])
      yield* second.release
      // The pool refills in the background: two servers again, however slow the machine is to start them.
      // A warm-pool server of this checkout (other checkouts on the machine run their own).
      const poolServers = () => processesWith("effect-sandbox-local")
      yield* eventually(() => `pool servers: ${poolServers().length}, not 2`, () => poolServers().length >= 2, 20_000)
      yield* Scope.close(poolScope, Exit.void)
      assert.deepStrictEqual(poolServers(), [])
    }), 45_000)
})
