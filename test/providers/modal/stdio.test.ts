/**
 * The sandbox command's output as Modal streams it live (the task command router's
 * `SandboxStdioReadV2`, the SDK's `sandbox.stdout`/`stderr`), and ModalRuntime's start on it: the
 * server's `listening` line heard there gets READY at the first `/alive` and the read let go; a
 * stream refused or stalled leaves the wait to the `/alive` poll. The stand-in's stream read through
 * the real SDK: chunks as they are printed, stdout and stderr apart, resumed at its offset after a
 * cut connection, ended at the command's end.
 */
import { assert, it } from "@effect/vitest"
import { Deferred, Effect, Schedule } from "effect"
import { ModalClient, type Sandbox } from "modal"
import { SERVER_PORT } from "../../../src/hosted/serverLaunch.ts"
import { ModalRuntime } from "../../../src/modal.ts"
import { sessionSandboxName } from "../../../src/providers/modal/driver.ts"
import { buildRuntime } from "../../docker/helpers.ts"
import { describeDocker } from "../../docker/infra.ts"
import { assertReadyAtFirstAlive } from "../aliveAttempts.ts"
import { standinOptions, TOKEN_ID, TOKEN_SECRET, useModalStandin } from "./fixture.ts"
import type { StandinSandbox } from "./sandboxes.ts"

/** How many times the runtime asked the server for `/alive` (through its tunnel). */
const aliveTimes = (sandbox: StandinSandbox) =>
  sandbox.tunnels.find((t) => t.containerPort === SERVER_PORT)!.requested.filter(({ path }) => path === "/alive")
    .map(({ at }) => at)

const aliveAttempts = (sandbox: StandinSandbox) => aliveTimes(sandbox).length

/** Until the stand-in serves no read of the sandbox's stdout (the runtime cancelled it). */
const letGo = (sandbox: StandinSandbox) =>
  Effect.sync(() => sandbox.stdio.stdout.reading).pipe(
    Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: (n) => n === 0 }),
    Effect.timeout("10 seconds")
  )

const readAll = async (stream: ReadableStream<string>, each: (chunk: string) => Promise<void> = async () => {}) => {
  let text = ""
  for await (const chunk of stream) {
    text += chunk
    await each(chunk)
  }
  return text
}

describeDocker("ModalRuntime output stream (stand-in)", () => {
  const standinOf = useModalStandin()

  const sandboxOf = (sessionId: string): StandinSandbox => {
    const name = sessionSandboxName(sessionId)
    const found = [...standinOf().sandboxes.values()].find((s) => s.definition.name === name)
    if (found === undefined) throw new Error(`no sandbox named ${name}`)
    return found
  }

  const reads = (sandbox: StandinSandbox) =>
    standinOf().calls.filter((c) => c.method === "SandboxStdioReadV2" && c.request["taskId"] === sandbox.taskId)

  it.live(
    "the listening line heard in stdout: READY at the first /alive, and the read let go",
    () =>
      Effect.gen(function*() {
        const { release } = yield* buildRuntime(
          ModalRuntime.layer(standinOptions(standinOf(), { sessionId: "md-heard" }))
        )
        const sandbox = sandboxOf("md-heard")
        assertReadyAtFirstAlive(aliveTimes(sandbox))
        assert.deepStrictEqual(reads(sandbox).map((c) => [c.request["fileDescriptor"], c.request["offset"]]), [[0, 0]])
        yield* letGo(sandbox)
        yield* release
      }),
    60_000
  )

  it.live(
    "a stream Modal refuses, or one that stalls: the wait polls /alive and the start reaches READY",
    () =>
      Effect.gen(function*() {
        const s = standinOf()
        s.faults.inject({ path: "SandboxStdioReadV2" }, { kind: "status", status: 429, message: "slow down" })
        const refused = yield* buildRuntime(ModalRuntime.layer(standinOptions(s, { sessionId: "md-refused" })))
        assert.isAtLeast(aliveAttempts(sandboxOf("md-refused")), 1)
        yield* refused.release
        const stall = yield* Deferred.make<void>()
        s.faults.inject({ path: "SandboxStdioReadV2" }, {
          kind: "hold",
          until: Effect.runPromise(Deferred.await(stall))
        })
        const stalled = yield* buildRuntime(ModalRuntime.layer(standinOptions(s, { sessionId: "md-stalled" }))).pipe(
          Effect.ensuring(Deferred.succeed(stall, undefined))
        )
        assert.isAtLeast(aliveAttempts(sandboxOf("md-stalled")), 1)
        yield* stalled.release
      }),
    60_000
  )

  /** A sandbox of the base image printing to both streams, made through the SDK as another program would. */
  const printer = (script: string) =>
    Effect.promise(async () => {
      process.env["MODAL_SERVER_URL"] = standinOf().url
      const client = new ModalClient({ tokenId: TOKEN_ID, tokenSecret: TOKEN_SECRET })
      const app = await client.apps.fromName("effect-sandbox", { createIfMissing: true })
      const image = await client.images.fromName("base")
      return client.sandboxes.create(app, image, { command: ["sh", "-c", script] })
    })

  it.live(
    "the stream read through the SDK: live chunks, stdout and stderr apart, resumed after a cut, ended with the command",
    () =>
      Effect.gen(function*() {
        const s = standinOf()
        const sandbox: Sandbox = yield* printer("echo one; echo err-one >&2; sleep 1; echo two; echo err-two >&2")
        const [stdout, stderr] = yield* Effect.promise(() =>
          Promise.all([
            // The first chunk comes while the command still runs (it sleeps before its second line).
            readAll(sandbox.stdout, async (chunk) => {
              if (chunk === "one\n") assert.strictEqual(await sandbox.poll(), null)
            }),
            readAll(sandbox.stderr)
          ])
        )
        assert.deepStrictEqual([stdout, stderr], ["one\ntwo\n", "err-one\nerr-two\n"])
        assert.strictEqual(yield* Effect.promise(() => sandbox.wait()), 0)

        // The connection cut after the first message, the second ready: the SDK reads on from the offset it reached.
        s.faults.inject({ path: "SandboxStdioReadV2" }, { kind: "cut" })
        const cut: Sandbox = yield* printer("echo first; sleep 0.5; echo second")
        const task = [...s.sandboxes.values()].find((one) => one.id === cut.sandboxId)!.taskId
        assert.strictEqual(yield* Effect.promise(() => readAll(cut.stdout)), "first\nsecond\n")
        assert.deepStrictEqual(
          s.calls.filter((c) => c.method === "SandboxStdioReadV2" && c.request["taskId"] === task).map((c) =>
            c.request["offset"]
          ),
          [0, "first\n".length]
        )
        yield* Effect.promise(() => Promise.all([sandbox.terminate(), cut.terminate()]))
      }),
    60_000
  )
})
