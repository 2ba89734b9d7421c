/** Status, capabilities, and cleanup. */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Scope, Stream } from "effect"
import { cgroupsAvailable } from "../../src/executor/shell/cgroup.ts"
import { type CmdOutputObservation, ErrorObservation, Runtime, UnsupportedCapabilityError } from "../../src/index.ts"
import { awaitProcessCount, hostProcesses, uniqueSeconds, withRuntime } from "./helpers.ts"
import { required } from "./requirement.ts"
import type { ConformanceTarget } from "./target.ts"

/** On the host, only a cgroup holds a process that dropped the session marker and left the shell's tree. */
const holdsEscapedProcesses = (target: ConformanceTarget) =>
  target.containsProcesses === true || required(cgroupsAvailable(), {
    ci: "CI must be able to create cgroups (root, writable /sys/fs/cgroup) for the release conformance case.",
    skipped: `Skipping ${target.name}'s case for processes that drop the session marker: no cgroups here (needs root).`
  })

/** A command's exit code, or the error's text when it was refused. */
const exitCodeOf = (obs: CmdOutputObservation | ErrorObservation) =>
  obs._tag === "CmdOutputObservation" ? obs.exitCode : obs.content

export const lifecycleConformance = (target: ConformanceTarget) =>
  describe("lifecycle", () => {
    it.live("status replays STARTING_RUNTIME, RUNTIME_STARTED, READY, then STOPPED on release", () =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(Layer.fresh(target.layer({ noChangeTimeoutSeconds: 1 })), scope)
        const rt = Context.get(context, Runtime)
        assert.strictEqual(yield* rt.currentStatus, "READY")
        const seen = yield* rt.status.pipe(
          Stream.takeUntil((s) => s === "STOPPED"),
          Stream.runCollect,
          Effect.forkDetach
        )
        yield* Effect.sleep("50 millis")
        yield* Scope.close(scope, Exit.void)
        // A runtime that builds an image first also passes through BUILDING_RUNTIME.
        const statuses = (yield* Fiber.join(seen)).filter((s) => s !== "BUILDING_RUNTIME")
        assert.deepStrictEqual(statuses, ["STARTING_RUNTIME", "RUNTIME_STARTED", "READY", "STOPPED"])
      }))

    it.live("reports the capabilities its target is configured with", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          assert.deepStrictEqual(rt.info.capabilities, target.capabilities)
          // Without snapshots, both verbs are refused as pause is (here: no runtime of its own to start).
          if (target.capabilities.snapshot) return
          const snapshot = yield* Effect.flip(rt.snapshot())
          assert.instanceOf(snapshot, UnsupportedCapabilityError)
          assert.strictEqual(snapshot.capability, "snapshot")
          const fork = yield* Effect.flip(Effect.scoped(rt.fork(2)))
          assert.instanceOf(fork, UnsupportedCapabilityError)
          assert.strictEqual(fork.capability, "fork")
        })))

    // One case per capability, each run by the target's configuration: a runtime with every tool
    // skips the four refusals and is held to pause and resume instead.
    it.live.skipIf(target.capabilities.browser)("without the browser, browsing answers OpenHands' error", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const browse = yield* rt.browse("http://127.0.0.1:1/")
          assert.instanceOf(browse, ErrorObservation)
          assert.strictEqual(browse.content, "Browser functionality is not supported or disabled.")
        })))

    it.live.skipIf(target.capabilities.ipython)("without IPython, a cell answers OpenHands' error", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const cell = yield* rt.runIPython("print(1)")
          assert.strictEqual(cell.content, "JupyterRequirement not found. Unable to run IPython action.")
        })))

    it.live.skipIf(target.capabilities.mcp)(
      "without MCP, a tool call answers OpenHands' error and no tool is listed",
      () =>
        withRuntime(target, (rt) =>
          Effect.gen(function*() {
            const tool = yield* rt.callTool({ name: "fetch" })
            assert.strictEqual(tool.content, "No MCP servers configured")
            assert.deepStrictEqual(yield* rt.listTools, [])
          }))
    )

    it.live.skipIf(target.capabilities.pause)("without pause, pausing fails with UnsupportedCapabilityError", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(rt.pause)
          assert.instanceOf(error, UnsupportedCapabilityError)
        })))

    it.live.skipIf(!target.capabilities.pause)(
      "with pause, PAUSED refuses calls at once and resume makes it READY to answer again",
      () =>
        withRuntime(target, (rt) =>
          Effect.gen(function*() {
            yield* rt.pause
            assert.strictEqual(yield* rt.currentStatus, "PAUSED")
            const refused = yield* Effect.flip(rt.runCommand("echo while paused"))
            assert.strictEqual(refused._tag, "RuntimePausedError")
            yield* rt.resume
            assert.strictEqual(yield* rt.currentStatus, "READY")
            assert.strictEqual((yield* rt.runCommand("echo after resume")).content, "after resume")
          })),
      // Pause may wait for a deleted pod to be confirmed gone: up to 70 s on a 1.20 kubelet.
      150_000
    )

    it.live("leaves nothing running after release, even disowned background jobs", () =>
      Effect.gen(function*() {
        const seconds = uniqueSeconds()
        yield* withRuntime(target, (rt) =>
          Effect.gen(function*() {
            // Each command must have completed: a refused second command would start nothing.
            const started = [
              yield* rt.runCommand(`sleep ${seconds} & disown; nohup sleep ${seconds} >/dev/null 2>&1 &`),
              yield* rt.runCommand(`setsid sleep ${seconds} >/dev/null 2>&1 < /dev/null &`)
            ]
            assert.deepStrictEqual(started.map(exitCodeOf), [0, 0])
            yield* awaitProcessCount(`sleep ${seconds}`, 3)
          }))
        assert.deepStrictEqual(hostProcesses(`sleep ${seconds}`), [])
      }))

    it.live.skipIf(!holdsEscapedProcesses(target))(
      "leaves nothing running after release, even processes that dropped the session marker",
      () =>
        Effect.gen(function*() {
          const seconds = uniqueSeconds()
          const sleep = `sleep ${seconds} >/dev/null 2>&1 < /dev/null`
          yield* withRuntime(target, (rt) =>
            Effect.gen(function*() {
              const started = [
                yield* rt.runCommand(`env -i setsid ${sleep} &`),
                yield* rt.runCommand(`env -u EFFECT_SANDBOX_SESSION setsid ${sleep} &`),
                // Double fork: the sleep's parent exits at once, so it is reparented away from the shell.
                yield* rt.runCommand(`(env -i setsid sh -c '${sleep} &' &)`)
              ]
              assert.deepStrictEqual(started.map(exitCodeOf), [0, 0, 0])
              yield* awaitProcessCount(`sleep ${seconds}`, 3)
            }))
          assert.deepStrictEqual(hostProcesses(`sleep ${seconds}`), [])
        })
    )

    it.live("runs actions of one session one at a time", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const results = yield* Effect.all(
            [1, 2, 3, 4].map((i) =>
              rt.runCommand(`echo start-${i}; sleep 0.05; echo end-${i}`)
            ),
            { concurrency: "unbounded" }
          )
          for (const [index, obs] of results.entries()) {
            assert.strictEqual(obs.content, `start-${index + 1}\nend-${index + 1}`)
          }
        })))
  })
