/**
 * The lifecycle endpoints of the runtime API (spec §14): `/start`, `/sessions/{sid}`,
 * `/runtime/{id}`, `/pause`, `/resume`, `/stop`, `/list`. Each decodes its request first
 * (decode.ts) and reads the sandbox back from the engine (sandboxes.ts): nothing is remembered here.
 */
import { Effect, Redacted, Schema } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { Activity } from "./activity.ts"
import { answerError, decodeBody, decodeParams, json } from "./decode.ts"
import { ApiError } from "./errors.ts"
import { API_ENDPOINTS } from "./paths.ts"
import { workHostPath } from "./proxy.ts"
import { type Sandbox, SANDBOX_APP_PORTS, Sandboxes, type SessionStatus } from "./sandboxes.ts"
import { RuntimeId, RuntimeRequest, SessionId, StartRequest } from "./schemas.ts"

export interface RouteOptions {
  /** Proxy mode: runtime URLs are `<publicUrl>/<runtime_id>` (proxy.ts). */
  readonly proxy: boolean
  /** The API server's URL as clients reach it (default `http://<host>:<port>` as it listens). */
  readonly publicUrl?: string | undefined
  /** The host it listens on (an any-address becomes 127.0.0.1 in the default URL). */
  readonly host: string
}

/** `host` as a URL's authority part. */
export const urlHost = (host: string) =>
  host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host

const runtimeNotFound = (runtimeId: string) => new ApiError({ status: 404, detail: `Runtime ${runtimeId} not found` })

export const lifecycleRoutes = (options: RouteOptions) =>
  HttpRouter.use(Effect.fn(function*(router) {
    const sandboxes = yield* Sandboxes
    const activity = yield* Activity
    const server = yield* HttpServer.HttpServer
    const address = server.address
    const base = options.publicUrl?.replace(/\/+$/, "") ??
      (address._tag === "UnixPathAddress" ? "http://localhost" : `http://${urlHost(options.host)}:${address.port}`)

    /** Where clients reach the runtime's action server: through us (proxy mode) or its published port. */
    const urlOf = (sandbox: Sandbox) => options.proxy ? `${base}/${sandbox.runtimeId}` : sandbox.serverUrl

    /** `work_hosts`: the app ports through us (`<url>/work-<n>`, proxy mode) or as published. */
    const workHostsOf = (sandbox: Sandbox) =>
      options.proxy
        ? Object.fromEntries(
          SANDBOX_APP_PORTS.flatMap((port, index) =>
            Object.values(sandbox.workHosts).includes(port)
              ? [[`${base}/${sandbox.runtimeId}${workHostPath(index)}`, port]]
              : []
          )
        )
        : sandbox.workHosts

    /** What `/start` and `/sessions/{sid}` answer (with the key: these are how a client gets it). */
    const described = (sandbox: Sandbox) => ({
      session_id: sandbox.sessionId,
      runtime_id: sandbox.runtimeId,
      status: sandbox.status,
      ...(sandbox.status === "stopped" ? {} : {
        url: urlOf(sandbox),
        work_hosts: workHostsOf(sandbox),
        session_api_key: Redacted.value(sandbox.sessionApiKey)
      })
    })

    const byRuntimeRequest = Effect.gen(function*() {
      const { runtime_id } = yield* decodeBody(RuntimeRequest)
      const sandbox = yield* sandboxes.byRuntime(runtime_id)
      if (sandbox === undefined) return yield* runtimeNotFound(runtime_id)
      return sandbox
    })

    yield* router.add(
      ...API_ENDPOINTS.start,
      Effect.gen(function*() {
        const request = yield* decodeBody(StartRequest)
        const sandbox = yield* sandboxes.start(request)
        activity.touch(sandbox.runtimeId)
        return json(described(sandbox))
      }).pipe(Effect.catch(answerError))
    )
    yield* router.add(
      ...API_ENDPOINTS.session,
      Effect.gen(function*() {
        const { sid } = yield* decodeParams(Schema.Struct({ sid: SessionId }))
        const sandbox = yield* sandboxes.bySession(sid)
        if (sandbox === undefined) return yield* new ApiError({ status: 404, detail: `Session ${sid} not found` })
        return json(described(sandbox))
      }).pipe(Effect.catch(answerError))
    )
    yield* router.add(
      ...API_ENDPOINTS.runtime,
      Effect.gen(function*() {
        const { id } = yield* decodeParams(Schema.Struct({ id: RuntimeId }))
        const sandbox = yield* sandboxes.byRuntime(id)
        if (sandbox === undefined) return yield* runtimeNotFound(id)
        const state = yield* sandboxes.podState(sandbox)
        return json({
          runtime_id: sandbox.runtimeId,
          session_id: sandbox.sessionId,
          status: sandbox.status,
          pod_status: state.podStatus,
          restart_count: state.restartCount,
          restart_reasons: state.restartReasons,
          ...(state.lastOutput === undefined ? {} : { last_output: state.lastOutput })
        })
      }).pipe(Effect.catch(answerError))
    )
    /** `/pause`, `/resume`, `/stop`: `{runtime_id}` in, the action done, `{runtime_id, status}` out. */
    const lifecycle = (
      endpoint: readonly ["POST", `/${string}`],
      act: (sandbox: Sandbox) => Effect.Effect<void, ApiError>,
      status: SessionStatus
    ) =>
      router.add(
        ...endpoint,
        Effect.gen(function*() {
          const sandbox = yield* byRuntimeRequest
          yield* act(sandbox)
          return json({ runtime_id: sandbox.runtimeId, status })
        }).pipe(Effect.catch(answerError))
      )
    yield* lifecycle(API_ENDPOINTS.pause, sandboxes.pause, "paused")
    yield* lifecycle(
      API_ENDPOINTS.resume,
      (sandbox) => Effect.tap(sandboxes.resume(sandbox), () => Effect.sync(() => activity.touch(sandbox.runtimeId))),
      "running"
    )
    yield* lifecycle(API_ENDPOINTS.stop, sandboxes.stop, "stopped")
    yield* router.add(
      ...API_ENDPOINTS.list,
      Effect.gen(function*() {
        const all = yield* sandboxes.list
        // No keys here: a listing is for operators, a key is for the session's own client.
        return json({
          runtimes: all.map((sandbox) => ({
            runtime_id: sandbox.runtimeId,
            session_id: sandbox.sessionId,
            status: sandbox.status,
            url: urlOf(sandbox),
            image: sandbox.image,
            created_at: sandbox.createdAt,
            resource_factor: sandbox.resourceFactor
          }))
        })
      }).pipe(Effect.catch(answerError))
    )
  }))
