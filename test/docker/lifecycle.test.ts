/**
 * A container's life: pause and resume, keep-alive and attach by session id, a
 * container killed from outside, and an owner killed with SIGKILL (the reaper).
 */
import { afterAll, assert, beforeAll, it } from "@effect/vitest"
import { Effect, Fiber, Stream } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { DockerRuntime } from "../../src/docker.ts"
import { RuntimeDisconnectedError, RuntimeStartError, SandboxConfig } from "../../src/index.ts"
import { eventually } from "../eventually.ts"
import { runtimeImageFor } from "../providers/runtimeImages.ts"
import {
  assertNoContainer,
  buildRuntime,
  containerName,
  dockerCli,
  dockerLayer,
  inspect,
  removeLeftovers,
  sessionContainers,
  sessionId,
  sh
} from "./helpers.ts"
import { baseImage, describeDocker } from "./infra.ts"

const state = (name: string, field: string) => dockerCli("inspect", "-f", `{{.State.${field}}}`, name).stdout.trim()

/** The host directory bound at /workspace. */
const hostWorkspace = (name: string) =>
  inspect(name).pipe(Effect.map((info) => info!.Mounts.find((m) => m.Destination === "/workspace")!.Source))

/**
 * A child Node process owning a DockerRuntime for `session`, started by a dash
 * that does not reap it until told to (`read`, then `wait`): once killed, the
 * owner stays a zombie, which no reaper (ours, or another test file's) takes for
 * dead, until `reap` lets dash collect it. Resolves once the owner printed READY.
 */
const ownerProcess = (image: string, session: string) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly shell: ChildProcess; readonly owner: number }, Error>((resume) => {
      const script = join(import.meta.dirname, "fixtures", "owner.ts")
      const shell = spawn("/bin/sh", [
        "-c",
        `"$0" "$1" "$2" "$3" & echo OWNER=$!; read _; wait`,
        process.execPath,
        script,
        image,
        session
      ], { stdio: ["pipe", "pipe", "pipe"] })
      let output = ""
      const onData = (chunk: Buffer) => {
        output += chunk.toString()
        const owner = /OWNER=(\d+)/.exec(output)?.[1]
        if (owner !== undefined && output.includes(`READY ${session}`)) {
          resume(Effect.succeed({ shell, owner: Number(owner) }))
        }
      }
      shell.stdout!.on("data", onData)
      shell.stderr!.on("data", onData)
      shell.on("exit", (code) => resume(Effect.fail(new Error(`owner exited (${code}) before READY:\n${output}`))))
    }).pipe(Effect.timeout("90 seconds")),
    ({ owner, shell }) =>
      Effect.sync(() => {
        try {
          process.kill(owner, "SIGKILL")
        } catch {
          // already gone
        }
        shell.kill("SIGKILL")
      })
  )

/** The state letter of a process (`Z` for a zombie), or null when it is gone. */
const processState = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] ?? null
  } catch {
    return null
  }
}

describeDocker("DockerRuntime lifecycle", () => {
  const image = baseImage()

  /** A runtime of `session` whose container is kept alive on release, and its host workspace. */
  const keptRuntime = (session: string) =>
    Effect.gen(function*() {
      const name = containerName(session)
      const kept = yield* buildRuntime(
        dockerLayer(image, { sessionId: session, sandbox: new SandboxConfig({ keepRuntimeAlive: true }) })
      )
      return { kept, name, workspace: yield* hostWorkspace(name) }
    })
  // The runtime image first, on its own time: in CI another file may hold the build lock for a
  // minute, which the first test's 60 s would otherwise count (CI failed so under load).
  beforeAll(() => runtimeImageFor(image, 1000, "openhands"), 300_000)
  afterAll(() => removeLeftovers("life"))

  it.live("pause freezes the container and resume brings back its files and processes", () =>
    Effect.gen(function*() {
      const session = sessionId("life")
      const name = containerName(session)
      const { release, rt } = yield* buildRuntime(dockerLayer(image, { sessionId: session }))
      yield* rt.write({ path: "/workspace/before-pause.txt", content: "still there" })
      const started = yield* sh(rt, "sleep 1000 >/dev/null 2>&1 & echo PID=$!")
      const pid = /PID=(\d+)/.exec(started.content)![1]!
      yield* rt.pause
      assert.strictEqual(state(name, "Paused"), "true")
      assert.strictEqual(state(name, "Status"), "paused")
      assert.strictEqual(yield* rt.currentStatus, "PAUSED")
      // At once, not after the HTTP timeout (the action's 120 s + 5 s) a frozen server would take.
      const refused = yield* Effect.flip(sh(rt, "echo while paused")).pipe(Effect.timeout("2 seconds"))
      assert.strictEqual(refused._tag, "RuntimePausedError")
      yield* rt.resume
      assert.strictEqual(state(name, "Paused"), "false")
      assert.strictEqual(yield* rt.currentStatus, "READY")
      assert.strictEqual((yield* sh(rt, `kill -0 ${pid} && echo alive`)).content, "alive")
      assert.strictEqual((yield* sh(rt, "cat /workspace/before-pause.txt")).content, "still there")
      assert.strictEqual((yield* sh(rt, "echo after resume")).content, "after resume")
      yield* release
      assertNoContainer(session)
    }), 60_000)

  it.live(
    "with whilePaused: \"wait\", a command sent while paused runs after the resume",
    () =>
      Effect.gen(function*() {
        const session = sessionId("life")
        const { release, rt } = yield* buildRuntime(dockerLayer(image, { sessionId: session, whilePaused: "wait" }))
        yield* rt.pause
        const waiting = yield* Effect.forkChild(sh(rt, "echo after the wait"))
        yield* Effect.sleep("200 millis")
        assert.isUndefined(waiting.pollUnsafe())
        yield* rt.resume
        assert.strictEqual((yield* Fiber.join(waiting)).content, "after the wait")
        yield* release
        assertNoContainer(session)
      }),
    60_000
  )

  it.live(
    "a runtime released while paused is removed all the same",
    () =>
      Effect.gen(function*() {
        const session = sessionId("life")
        const { release, rt } = yield* buildRuntime(dockerLayer(image, { sessionId: session }))
        yield* rt.pause
        assert.strictEqual(state(containerName(session), "Paused"), "true")
        yield* release
        assertNoContainer(session)
      }),
    60_000
  )

  it.live(
    "keepRuntimeAlive leaves the container running; a layer with the same session id attaches to it",
    () =>
      Effect.gen(function*() {
        const session = sessionId("life")
        const { kept, name, workspace } = yield* keptRuntime(session)
        const id = (yield* inspect(name))!.Id
        yield* kept.rt.write({ path: "/workspace/kept.txt", content: "from the first layer" })
        yield* sh(kept.rt, "export KEPT_VAR=exported-before; cd /tmp")
        const shellPid = (yield* sh(kept.rt, "echo $$")).content
        yield* kept.release
        assert.strictEqual(state(name, "Running"), "true")
        assert.deepStrictEqual(sessionContainers(session), [id.slice(0, 12)])
        assert.strictEqual((yield* inspect(name))!.Config.Labels["effect-sandbox.keep-alive"], "true")

        // No keepRuntimeAlive this time: this layer attaches, and removes the container on release.
        const attached = yield* buildRuntime(dockerLayer(image, { sessionId: session }))
        assert.strictEqual((yield* inspect(name))!.Id, id)
        assert.strictEqual((yield* sh(attached.rt, "cat /workspace/kept.txt")).content, "from the first layer")
        // The container and its action server never stopped, so this is the same bash session:
        // the exported variable, the working directory and the shell's pid are those of before.
        assert.strictEqual((yield* sh(attached.rt, "echo $KEPT_VAR")).content, "exported-before")
        assert.strictEqual((yield* sh(attached.rt, "pwd")).content, "/tmp")
        assert.strictEqual((yield* sh(attached.rt, "echo $$")).content, shellPid)
        yield* attached.release
        assertNoContainer(session)
        // The kept temporary workspace outlives the container (see the report); remove it here.
        rmSync(workspace, { recursive: true, force: true })
      }),
    90_000
  )

  it.live(
    "attach takes the session's kept container, stopped or not; without one it fails and makes none",
    () =>
      Effect.gen(function*() {
        const session = sessionId("life")
        const missing = yield* Effect.flip(buildRuntime(DockerRuntime.attach(session, { baseImage: image })))
        assert.instanceOf(missing, RuntimeStartError)
        assert.strictEqual(missing.message, `Docker has no container of session ${session} to attach to.`)
        assertNoContainer(session)

        const { kept, name, workspace } = yield* keptRuntime(session)
        yield* kept.rt.write({ path: "/workspace/kept.txt", content: "kept" })
        yield* kept.release
        // Stopped (its server with it): attach starts it again, the key copied in anew.
        assert.strictEqual(dockerCli("stop", "-t", "1", name).status, 0)
        const attached = yield* buildRuntime(DockerRuntime.attach(session, { baseImage: image }))
        assert.strictEqual((yield* sh(attached.rt, "cat /workspace/kept.txt")).content, "kept")
        yield* attached.release
        assertNoContainer(session)
        rmSync(workspace, { recursive: true, force: true })
      }),
    90_000
  )

  it.live(
    "a container killed from outside fails the next action with RuntimeDisconnectedError",
    () =>
      Effect.gen(function*() {
        const session = sessionId("life")
        const name = containerName(session)
        const { release, rt } = yield* buildRuntime(dockerLayer(image, { sessionId: session }))
        const statuses = yield* rt.status.pipe(
          Stream.takeUntil((s) => s === "ERROR_RUNTIME_DISCONNECTED"),
          Stream.runCollect,
          Effect.forkChild
        )
        assert.strictEqual(dockerCli("kill", name).status, 0)
        const error = yield* Effect.flip(rt.runCommand("echo too late"))
        assert.instanceOf(error, RuntimeDisconnectedError)
        assert.include(error.message, "start a new runtime")
        assert.deepStrictEqual(
          yield* Fiber.join(statuses),
          ["STARTING_RUNTIME", "RUNTIME_STARTED", "READY", "ERROR_RUNTIME_DISCONNECTED"]
        )
        assert.strictEqual(yield* rt.currentStatus, "ERROR_RUNTIME_DISCONNECTED")
        yield* release
        assertNoContainer(session)
      }),
    90_000
  )

  it.live(
    "the container of an owner killed with SIGKILL is reaped when the next runtime starts",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const orphan = sessionId("life")
        const { owner, shell } = yield* ownerProcess(image, orphan)
        const [id] = sessionContainers(orphan)
        assert.isDefined(id)
        assert.strictEqual((yield* inspect(id!))!.Config.Labels["effect-sandbox.owner.pid"], String(owner))
        const workspace = yield* hostWorkspace(id!)
        process.kill(owner, "SIGKILL")
        yield* eventually("the owner became a zombie", () => processState(owner) === "Z", 10_000, 250)
        // The owner is dead and no finalizer ran: the container outlives it.
        assert.deepStrictEqual(sessionContainers(orphan), [id])
        assert.strictEqual(state(id!, "Running"), "true")
        // Let dash reap it: now the owner's pid is gone, and the container is an orphan.
        const shellExited = Effect.callback<void>((resume) => {
          if (shell.exitCode !== null || shell.signalCode !== null) return resume(Effect.void)
          shell.once("exit", () => resume(Effect.void))
        })
        shell.stdin!.end("reap\n")
        yield* shellExited
        assert.isNull(processState(owner))

        const next = sessionId("life")
        const { release, rt } = yield* buildRuntime(dockerLayer(image, { sessionId: next }))
        yield* eventually("the orphan was removed", () => sessionContainers(orphan).length === 0, 60_000, 250)
        assert.strictEqual((yield* sh(rt, "echo alive")).content, "alive")
        yield* release
        assertNoContainer(next)
        assertNoContainer(orphan)
        // The reaper removes the orphan's temporary workspace with it.
        assert.isFalse(existsSync(workspace), "the dead owner's temporary workspace remains")
      })),
    150_000
  )
})
