/** What RemoteRuntime's tests share: fast schedules, options for a scripted API, a real action server behind it. */
import { assert } from "@effect/vitest"
import { Effect, Layer, Redacted, Schedule } from "effect"
import { CmdOutputObservation, Runtime, SandboxConfig } from "../../src/index.ts"
import type { RemoteRuntimeOptions } from "../../src/remote.ts"
import { startTestServer } from "../server/helpers.ts"
import { type Answer, type ScriptedApi, scriptedApi } from "./scriptedApi.ts"

export const API_KEY = "api-key-for-tests"
export const IMAGE = "effect-sandbox-runtime:test"
/** Milliseconds instead of OpenHands' seconds, the same number of tries. */
export const fastRetry = Schedule.spaced("10 millis").pipe(Schedule.upTo({ times: 2 }))
export const fast = { podStatus: Schedule.spaced("10 millis") }

export const options = (
  api: Pick<ScriptedApi, "url">,
  more: Partial<RemoteRuntimeOptions> = {}
): RemoteRuntimeOptions => ({
  apiUrl: api.url,
  apiKey: Redacted.make(API_KEY),
  image: IMAGE,
  providerRetry: fastRetry,
  schedules: fast,
  ...more
})

/** The sandbox settings of a runtime kept on release (`keepRuntimeAlive`). */
export const keptAlive = new SandboxConfig({ keepRuntimeAlive: true })

export const ready: Answer = { status: 200, body: { runtime_id: "rt-1", pod_status: "Ready", restart_count: 0 } }
export const pod = (status: string): Answer => ({ status: 200, body: { runtime_id: "rt-1", pod_status: status } })

/**
 * A real action server behind a scripted API: `script` gets the runtime URL (the API's proxy to
 * the server) and the server's key, to hand out in its answers.
 */
export const withActionServer = (script: (runtimeUrl: string, key: string) => Record<string, Array<Answer>>) =>
  Effect.gen(function*() {
    const server = yield* startTestServer()
    const answers: Record<string, Array<Answer>> = {}
    const api = yield* scriptedApi(answers, server.baseUrl)
    Object.assign(answers, script(api.runtimeUrl, server.key))
    return api
  })

/** `GET /sessions/{sid}`'s answer for a session whose runtime rt-1 is `status`. */
export const session = (status: string, url: string, key: string): Answer => ({
  status: 200,
  body: { status, runtime_id: "rt-1", url, session_api_key: key }
})

/** How building `layer` failed. */
export const startFailure = <E>(layer: Layer.Layer<Runtime, E>) => Effect.flip(Effect.scoped(Layer.build(layer)))

export const startError = (layer: Layer.Layer<Runtime, { readonly message: string }>) =>
  Effect.map(startFailure(layer), (e) => e.message)

/** A start the runtime API refused, as data: the provider's reason and the API's status. */
export const refusedStart = (error: unknown) => {
  const failure = error as { _tag?: string; reason?: string; provider?: { reason?: string; status?: number } }
  assert.strictEqual(failure._tag, "RuntimeStartError")
  assert.strictEqual(failure.reason, "provider")
  return { reason: failure.provider?.reason, status: failure.provider?.status }
}

export const echo = Effect.gen(function*() {
  const rt = yield* Runtime
  const observation = yield* rt.runCommand("echo remote-$((20+22))")
  assert.instanceOf(observation, CmdOutputObservation)
  return { content: observation.content.trim(), exitCode: observation.metadata.exitCode, info: rt.info }
})
