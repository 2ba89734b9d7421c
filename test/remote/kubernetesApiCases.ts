/**
 * The runtime API's Kubernetes backend cases that run on the stand-in (kubernetesApi.test.ts) and
 * on the real cluster (test/kubernetes/real/runtimeApi.test.ts) alike: RemoteRuntime keeps a
 * session across pause, resume and API server restarts, a missing image shows as `pod_status`
 * failed with the kubelet's reason, and a command that exits at once as failed with its exit code
 * and last output. Each test file says how its API servers start and where the
 * session's objects are listed.
 */
import { assert } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { CmdOutputObservation, Runtime } from "../../src/index.ts"
import type { RemoteRuntimeOptions } from "../../src/remote.ts"
import type { sessionObjects } from "../kubernetes/helpers.ts"
import { type ApiServer, apiServerLayer, call, newSessionId, type Started } from "./apiServer.ts"
import { keptAlive } from "./helpers.ts"

/** The command's output and exit code on a runtime of `layer`, released afterwards. */
export const runOn = (layer: Layer.Layer<Runtime, unknown>, command: string) =>
  Effect.gen(function*() {
    const observation = yield* (yield* Runtime).runCommand(command)
    assert.instanceOf(observation, CmdOutputObservation)
    return { content: observation.content.trim(), exitCode: observation.metadata.exitCode }
  }).pipe(Effect.provide(layer))

/**
 * A session written through a first API server and released (paused: the pod deleted, its Secret,
 * service and PVC kept); a second server reads it back from the cluster and resumes it with the
 * file kept, and leaves it running; a third serves the running session, whose release stops it
 * and leaves nothing. `more` are RemoteRuntime's options beyond the session's (an image).
 */
export const keepsSessionAcrossRestarts = (input: {
  readonly key: string
  readonly startServer: Effect.Effect<ApiServer>
  readonly objectsOf: (sessionId: string) => ReturnType<typeof sessionObjects>
  readonly more?: Partial<RemoteRuntimeOptions>
}) =>
  Effect.gen(function*() {
    const { key, startServer, objectsOf, more = {} } = input
    const sid = newSessionId()
    const first = yield* startServer
    const written = yield* runOn(
      apiServerLayer(first.base, key, sid, { ...more, sandbox: keptAlive }),
      "echo kept > /workspace/note.txt && echo remote-$((20+22))"
    )
    assert.deepStrictEqual(written, { content: "remote-42", exitCode: 0 })

    // Paused on release: the pod deleted, the Secret (the sandbox's record), service and PVC kept.
    const paused = yield* objectsOf(sid)
    assert.deepStrictEqual(paused.pods, [])
    assert.strictEqual(paused.secrets.length, 1)
    assert.strictEqual(paused.services.length, 1)
    assert.strictEqual(paused.claims.length, 1)

    // A new API server reads the session back from the cluster and resumes it.
    yield* Effect.promise(() => first.kill())
    const second = yield* startServer
    const session = yield* Effect.promise(() => call(second.base, "GET", `/sessions/${sid}`, { key }))
    assert.strictEqual(session.body["status"], "paused")
    const resumed = yield* runOn(
      apiServerLayer(second.base, key, sid, { ...more, sandbox: keptAlive, pauseClosedRuntimes: false }),
      "cat /workspace/note.txt"
    )
    assert.deepStrictEqual(resumed, { content: "kept", exitCode: 0 })

    // Left running; a third API server serves the running session, whose release stops it.
    yield* Effect.promise(() => second.kill())
    const third = yield* startServer
    const attached = yield* runOn(apiServerLayer(third.base, key, sid, more), "cat /workspace/note.txt")
    assert.deepStrictEqual(attached, { content: "kept", exitCode: 0 })
    const gone = yield* Effect.promise(() => call(third.base, "GET", `/sessions/${sid}`, { key }))
    assert.strictEqual(gone.status, 404)
    return sid
  })

/** `/runtime/{id}`'s answer once its `pod_status` is none of `passing` (asked every 250 ms, for at most a minute). */
const settledRuntime = (base: string, key: string, runtimeId: string, passing: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const status = Effect.promise(() => call(base, "GET", `/runtime/${runtimeId}`, { key }))
    let answer = yield* status
    for (let attempt = 0; attempt < 240 && passing.includes(String(answer.body["pod_status"])); attempt++) {
      yield* Effect.sleep("250 millis")
      answer = yield* status
    }
    return answer.body
  })

/** `/runtime/{id}` of a sandbox whose image no registry has: `failed` once the kubelet says so, with its reason. */
export const expectImageMissing = (base: string, key: string, runtimeId: string) =>
  Effect.gen(function*() {
    const missing = yield* settledRuntime(base, key, runtimeId, ["pending"])
    assert.strictEqual(missing["pod_status"], "failed")
    assert.match(String((missing["restart_reasons"] as Array<string>)[0]), /^(ErrImagePull|ImagePullBackOff): /)
  })

/** What `dyingCommand` prints before it exits. */
const DYING_WORDS = "dying words: no such config"

/**
 * A command for our runtime image's `node` that prints `DYING_WORDS`, then a line of 1,000
 * characters, and exits 3 at once.
 */
export const dyingCommand = (node: string) => [
  node,
  "-e",
  `console.log(${JSON.stringify(DYING_WORDS)}); console.log("x".repeat(1000)); process.exit(3)`
]

/**
 * `/runtime/{id}` of a sandbox whose command exits at once (`dyingCommand`): failed (or in a crash
 * loop) once the kubelet says so, its restart reason naming the exit code, and its last output in
 * `last_output`, which RemoteRuntime puts in its start error, its long line cut to 300 characters.
 */
export const expectExited = (base: string, key: string, runtimeId: string) =>
  Effect.gen(function*() {
    const exited = yield* settledRuntime(base, key, runtimeId, ["pending", "running"])
    assert.include(["failed", "crashloopbackoff"], exited["pod_status"], JSON.stringify(exited))
    assert.match(String((exited["restart_reasons"] as Array<string>)[0]), /\bexit code 3\b/)
    assert.include(String(exited["last_output"]), DYING_WORDS)
    assert.include(String(exited["last_output"]), `\n${"x".repeat(300)}...`)
    assert.notInclude(String(exited["last_output"]), "x".repeat(301))
  })

/**
 * `POST /start` of `body` as a §14 client sends it: the sandbox, once the API answered 200. Stopped
 * again when the test's scope closes (a no-op after `stopSandboxes`), so that a case failing half
 * way leaves no sandbox behind on a cluster that outlives it.
 */
export const startSandbox = (base: string, key: string, body: Record<string, unknown>) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const answer = await call(base, "POST", "/start", { key, body })
      assert.strictEqual(answer.status, 200, JSON.stringify(answer.body))
      return answer.body as unknown as Started
    }),
    (started) =>
      Effect.promise(() =>
        call(base, "POST", "/stop", { key, body: { runtime_id: started.runtime_id } }).catch(() => undefined)
      )
  )

/** `POST /stop` of each sandbox, each answered 200. */
export const stopSandboxes = (base: string, key: string, sandboxes: ReadonlyArray<Started>) =>
  Effect.forEach(
    sandboxes,
    (started) =>
      Effect.promise(() => call(base, "POST", "/stop", { key, body: { runtime_id: started.runtime_id } })).pipe(
        Effect.map((stopped) => assert.strictEqual(stopped.status, 200))
      ),
    { discard: true }
  )
