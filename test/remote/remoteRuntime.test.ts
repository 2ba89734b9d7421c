/**
 * RemoteRuntime against a scripted runtime API (test/remote/scriptedApi.ts) whose runtime URL is a
 * proxy to a real action server: what the client sends (X-API-Key, the `/start` body), the session
 * flow (start, attach, resume), the pod wait and its failures with OpenHands' texts, the release
 * policy, the action-server error mapping and the API retries.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { Runtime, RuntimeStartError } from "../../src/index.ts"
import { apiRetrySchedule, podStatusSchedule, RemoteRuntime, type RemoteRuntimeOptions } from "../../src/remote.ts"
import {
  API_KEY,
  echo,
  IMAGE,
  keptAlive,
  options,
  pod,
  ready,
  refusedStart,
  session,
  startError,
  startFailure,
  withActionServer
} from "./helpers.ts"
import { scriptedApi } from "./scriptedApi.ts"

/** The start error of a session lookup the API refused with `answer` (`<status> <detail>`). */
const refusedLookup = (api: { readonly url: string }, sessionId: string, answer: string) =>
  `Remote could not look up session ${sessionId}: The runtime API at ${api.url} refused GET /sessions/${sessionId}: ` +
  `HTTP ${answer}`

describe("RemoteRuntime", () => {
  it("exports its policies as schedules", () => {
    assert.isTrue(Schedule.isSchedule(apiRetrySchedule))
    assert.isTrue(Schedule.isSchedule(podStatusSchedule))
  })

  it.live("starts a runtime (429 twice, pod pending then ready), runs a command on it, stops it on release", () =>
    Effect.gen(function*() {
      const api = yield* withActionServer((url, key) => ({
        "GET /sessions/s-start": [{ status: 404, body: { detail: "no such session" } }],
        "POST /start": [{ status: 429 }, { status: 429 }, {
          status: 200,
          body: { runtime_id: "rt-1", url, work_hosts: { "http://work-1.example": 12000 }, session_api_key: key }
        }],
        "GET /runtime/rt-1": [pod("not found"), pod("pending"), pod("running"), ready],
        "POST /stop": [{ status: 200 }]
      }))
      const result = yield* echo.pipe(
        Effect.provide(
          RemoteRuntime.layer(options(api, { sessionId: "s-start", runtimeClass: "sysbox", resourceFactor: 2 }))
        )
      )
      assert.deepStrictEqual({ content: result.content, exitCode: result.exitCode }, {
        content: "remote-42",
        exitCode: 0
      })
      assert.strictEqual(result.info.kind, "remote")
      assert.strictEqual(result.info.id, "s-start")
      assert.strictEqual(result.info.workspace, "/workspace")
      assert.strictEqual(result.info.urls["app-12000"], "http://work-1.example")
      assert.deepStrictEqual(api.calls(), [
        "GET /sessions/s-start",
        "POST /start",
        "POST /start",
        "POST /start",
        "GET /runtime/rt-1",
        "GET /runtime/rt-1",
        "GET /runtime/rt-1",
        "GET /runtime/rt-1",
        "POST /stop"
      ])
      for (const request of api.requests) assert.strictEqual(request.headers["x-api-key"], API_KEY)
      const start = api.requests[1]!.body as Record<string, unknown>
      const command = start["command"] as Array<string>
      assert.deepStrictEqual(command.slice(0, 5), [
        "/opt/effect-sandbox/bin/node",
        "/opt/effect-sandbox/payload/server.mjs",
        "60000",
        "--working-dir",
        "/workspace"
      ])
      assert.includeMembers(command, ["--host", "0.0.0.0", "--restrict-to-workspace"])
      assert.strictEqual(start["image"], IMAGE)
      assert.strictEqual(start["working_dir"], "/workspace")
      assert.strictEqual(start["session_id"], "s-start")
      assert.strictEqual(start["resource_factor"], 2)
      assert.strictEqual(start["runtime_class"], "sysbox-runc")
      const environment = start["environment"] as Record<string, string>
      assert.strictEqual(environment["RUNTIME_ID"], "s-start")
      assert.match(environment["SESSION_API_KEY"]!, /^[\w-]{32}$/)
      assert.deepStrictEqual(api.requests.at(-1)!.body, { runtime_id: "rt-1" })
    }))

  it.live("a crash-looping pod fails the start with OpenHands' text, and the runtime is stopped", () =>
    Effect.gen(function*() {
      const api = yield* scriptedApi({
        "GET /sessions/s-crash": [{ status: 404 }],
        "POST /start": [{ status: 200, body: { runtime_id: "rt-1", url: "http://127.0.0.1:9/rt" } }],
        "GET /runtime/rt-1": [pod("pending"), pod("CrashLoopBackOff")],
        "POST /stop": [{ status: 200 }]
      })
      const error = yield* startFailure(RemoteRuntime.layer(options(api, { sessionId: "s-crash" })))
      assert.strictEqual(
        error.message,
        "Runtime crashed and is being restarted, potentially due to memory usage. Please try again."
      )
      // The server exited (the API tells no exit code or output).
      assert.strictEqual(error._tag === "RuntimeStartError" ? error.reason : error._tag, "server-exited")
      assert.deepStrictEqual(api.calls().slice(-1), ["POST /stop"])
    }))

  it.live("a failed pod's status is in the error", () =>
    Effect.gen(function*() {
      const api = yield* scriptedApi({
        "GET /sessions/s-failed": [{ status: 404 }],
        "POST /start": [{ status: 200, body: { runtime_id: "rt-1", url: "http://127.0.0.1:9/rt" } }],
        "GET /runtime/rt-1": [pod("Failed")],
        "POST /stop": [{ status: 200 }]
      })
      const message = yield* startError(RemoteRuntime.layer(options(api, { sessionId: "s-failed" })))
      assert.strictEqual(message, "Runtime is unavailable (status: failed). Please try again.")
    }))

  it.live("a failed pod's restart reasons and last output: the server's exit as data, in OpenHands' text", () =>
    Effect.gen(function*() {
      const api = yield* scriptedApi({
        "GET /sessions/s-exited": [{ status: 404 }],
        "POST /start": [{ status: 200, body: { runtime_id: "rt-1", url: "http://127.0.0.1:9/rt" } }],
        "GET /runtime/rt-1": [pod("pending"), {
          status: 200,
          body: {
            runtime_id: "rt-1",
            pod_status: "failed",
            restart_reasons: ["exited with code 2"],
            last_output: "booting\nno config at /etc/app.toml\n"
          }
        }],
        "POST /stop": [{ status: 200 }]
      })
      const error = yield* startFailure(RemoteRuntime.layer(options(api, { sessionId: "s-exited" })))
      assert.instanceOf(error, RuntimeStartError)
      assert.strictEqual(
        error.message,
        "Runtime is unavailable (status: failed). Please try again. Restart reasons: exited with code 2. " +
          "Its last output:\nbooting\nno config at /etc/app.toml"
      )
      const { reason, exitCode, output } = error as RuntimeStartError
      assert.deepStrictEqual({ reason, exitCode, output }, {
        reason: "server-exited",
        exitCode: 2,
        output: "booting\nno config at /etc/app.toml"
      })
      assert.deepStrictEqual(api.calls().slice(-1), ["POST /stop"])
    }))

  it.live("a failed pod's reason without an exit code is told, and is not the server's exit", () =>
    Effect.gen(function*() {
      const api = yield* scriptedApi({
        "GET /sessions/s-evicted": [{ status: 404 }],
        "POST /start": [{ status: 200, body: { runtime_id: "rt-1", url: "http://127.0.0.1:9/rt" } }],
        "GET /runtime/rt-1": [{
          status: 200,
          body: { runtime_id: "rt-1", pod_status: "Failed", restart_reasons: ["Evicted: the node ran out of disk"] }
        }],
        "POST /stop": [{ status: 200 }]
      })
      const error = yield* startFailure(RemoteRuntime.layer(options(api, { sessionId: "s-evicted" })))
      assert.strictEqual(
        error.message,
        "Runtime is unavailable (status: failed). Please try again. Restart reasons: Evicted: the node ran out of disk."
      )
      assert.strictEqual(error._tag === "RuntimeStartError" ? error.reason : error._tag, "other")
    }))

  it.live("attach without a runtime: the hosted not-found text, nothing started", () =>
    Effect.gen(function*() {
      const api = yield* scriptedApi({ "GET /sessions/s-none": [{ status: 404 }] })
      const message = yield* startError(RemoteRuntime.attach("s-none", options(api)))
      assert.strictEqual(message, "Remote has no runtime of session s-none to attach to.")
      assert.deepStrictEqual(api.calls(), ["GET /sessions/s-none"])
    }))

  it.live("a paused session is resumed and used; kept alive, it is paused again on release", () =>
    Effect.gen(function*() {
      const api = yield* withActionServer((url, key) => ({
        "GET /sessions/s-paused": [session("paused", url, key)],
        "POST /resume": [{ status: 200 }],
        "GET /runtime/rt-1": [pod("pending"), ready],
        "POST /pause": [{ status: 200 }]
      }))
      const result = yield* echo.pipe(
        Effect.provide(RemoteRuntime.layer(options(api, { sessionId: "s-paused", sandbox: keptAlive })))
      )
      assert.strictEqual(result.content, "remote-42")
      assert.deepStrictEqual(api.calls(), [
        "GET /sessions/s-paused",
        "POST /resume",
        "GET /runtime/rt-1",
        "GET /runtime/rt-1",
        "POST /pause"
      ])
      assert.deepStrictEqual(api.requests[1]!.body, { runtime_id: "rt-1" })
    }))

  it.live("a running session is attached to; kept alive without pauseClosedRuntimes, release leaves it", () =>
    Effect.gen(function*() {
      const api = yield* withActionServer((url, key) => ({
        "GET /sessions/s-running": [session("running", url, key)]
      }))
      const result = yield* echo.pipe(
        Effect.provide(
          RemoteRuntime.layer(
            options(api, { sessionId: "s-running", sandbox: keptAlive, pauseClosedRuntimes: false })
          )
        )
      )
      assert.strictEqual(result.content, "remote-42")
      assert.deepStrictEqual(api.calls(), ["GET /sessions/s-running"])
    }))

  it.live("503 from a kept-alive runtime: resumed, the action sent once more; 502: OpenHands' disconnect text", () =>
    Effect.gen(function*() {
      const api = yield* withActionServer((url, key) => ({
        "GET /sessions/s-503": [session("running", url, key)],
        "POST /resume": [{ status: 200 }],
        "GET /runtime/rt-1": [ready],
        "POST /pause": [{ status: 200 }]
      }))
      const outcome = yield* Effect.gen(function*() {
        const rt = yield* Runtime
        api.proxyFailures.push(503)
        const resumed = yield* rt.runCommand("echo after-resume")
        api.proxyFailures.push(502)
        const lost = yield* Effect.flip(rt.runCommand("echo never"))
        return { resumed: resumed.content.trim(), lost }
      }).pipe(Effect.provide(RemoteRuntime.layer(options(api, { sessionId: "s-503", sandbox: keptAlive }))))
      assert.strictEqual(outcome.resumed, "after-resume")
      assert.strictEqual(outcome.lost._tag, "RuntimeDisconnectedError")
      assert.strictEqual(
        outcome.lost.message,
        "Runtime is temporarily unavailable. This may be due to a restart or network issue, please try again. " +
          "Original error: HTTP 502 proxy says 502"
      )
      assert.deepStrictEqual(api.calls(), [
        "GET /sessions/s-503",
        "POST /resume",
        "GET /runtime/rt-1",
        "POST /pause"
      ])
    }))

  it.live("404 from the runtime's URL: OpenHands' not-responding text", () =>
    Effect.gen(function*() {
      const api = yield* withActionServer((url, key) => ({
        "GET /sessions/s-404": [session("running", url, key)],
        "POST /stop": [{ status: 200 }]
      }))
      const error = yield* Effect.gen(function*() {
        const rt = yield* Runtime
        api.proxyFailures.push(404)
        return yield* Effect.flip(rt.runCommand("echo never"))
      }).pipe(Effect.provide(RemoteRuntime.layer(options(api, { sessionId: "s-404" }))))
      assert.strictEqual(
        error.message,
        "Runtime is not responding. This may be temporary, please try again. Original error: HTTP 404 proxy says 404"
      )
      assert.deepStrictEqual(api.calls(), ["GET /sessions/s-404", "POST /stop"])
    }))

  it.live("an API that keeps answering 429 fails the start once providerRetry ends, as rate-limited", () =>
    Effect.gen(function*() {
      const api = yield* scriptedApi({ "GET /sessions/s-busy": [{ status: 429 }] })
      const error = yield* startFailure(RemoteRuntime.layer(options(api, { sessionId: "s-busy" })))
      assert.strictEqual(error.message, refusedLookup(api, "s-busy", "429 (too many requests)"))
      assert.deepStrictEqual(refusedStart(error), { reason: "rate-limited", status: 429 })
      assert.deepStrictEqual(api.calls(), Array(3).fill("GET /sessions/s-busy"))
    }))

  it.live("the API's refusals are data: a wrong key unauthorized, an unknown route not-found, once each", () =>
    Effect.gen(function*() {
      const api = yield* scriptedApi({
        "GET /sessions/s-key": [{ status: 401, body: { detail: "Invalid API key" } }],
        "GET /sessions/s-gone": [{ status: 404 }],
        "POST /start": [{ status: 404, body: { detail: "Not Found" } }]
      })
      const wrongKey = yield* startFailure(RemoteRuntime.layer(options(api, { sessionId: "s-key" })))
      assert.strictEqual(wrongKey.message, refusedLookup(api, "s-key", "401 Invalid API key"))
      assert.deepStrictEqual(refusedStart(wrongKey), { reason: "unauthorized", status: 401 })
      const noRoute = yield* startFailure(RemoteRuntime.layer(options(api, { sessionId: "s-gone" })))
      assert.deepStrictEqual(refusedStart(noRoute), { reason: "not-found", status: 404 })
      assert.deepStrictEqual(api.calls(), ["GET /sessions/s-key", "GET /sessions/s-gone", "POST /start"])
    }))

  it.live("without a key: OpenHands' text, nothing sent", () =>
    Effect.gen(function*() {
      const api = yield* scriptedApi({})
      const { apiKey: _, ...noKey } = options(api)
      const previous = process.env["SANDBOX_API_KEY"]
      delete process.env["SANDBOX_API_KEY"]
      const message = yield* startError(RemoteRuntime.layer(noKey)).pipe(
        Effect.ensuring(
          Effect.sync(() => previous === undefined ? undefined : process.env["SANDBOX_API_KEY"] = previous)
        )
      )
      assert.strictEqual(
        message,
        "RemoteRuntime options: no apiKey given and SANDBOX_API_KEY is not set (the runtime API's key, sent as X-API-Key)."
      )
      assert.deepStrictEqual(api.calls(), [])
    }))

  it.live("a bad runtimeClass, a host workspace and limits the API decides are refused before anything is sent", () =>
    Effect.gen(function*() {
      const api = yield* scriptedApi({})
      const badClass = yield* startError(
        RemoteRuntime.layer(options(api, { runtimeClass: "kata" as "gvisor" }))
      )
      assert.match(badClass, /^Invalid RemoteRuntime options: runtimeClass: /)
      const workspace = yield* startError(
        RemoteRuntime.layer({ ...options(api), workspace: "/tmp" } as RemoteRuntimeOptions)
      )
      assert.strictEqual(
        workspace,
        "Invalid RemoteRuntime options: workspace: a host directory cannot be mounted into a Remote runtime (its " +
          "workspace is /workspace there): upload files with copyTo instead."
      )
      const limits = yield* startError(RemoteRuntime.layer(options(api, { pidsLimit: 100, cpus: 2 })))
      assert.strictEqual(
        limits,
        "RemoteRuntime options: cpus, pidsLimit: the runtime API sizes a runtime (resourceFactor)."
      )
      assert.deepStrictEqual(api.calls(), [])
    }))
})
