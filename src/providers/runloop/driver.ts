/**
 * The Runloop driver (services/Driver.ts): a devbox (a microVM) made from a blueprint with our
 * metadata, the server's environment, its size and an idle policy Runloop enforces once the owner
 * stops its keep-alives (launchParameters.ts); the server started through the command API
 * (server.ts); every port reached through the devbox's authenticated tunnel, whose token is a second
 * secret besides the session key. Pause is Runloop's suspend, which keeps the disk but "will not
 * snapshot memory state such as running processes" (the SDK's words): the server is started again.
 */
import type { Runloop } from "@runloop/api-client"
import { Config, Duration, Effect, Option, Redacted } from "effect"
import { loadOptionalPeer } from "../../hosted/optionalPeer.ts"
import { credential, unsupported } from "../../hosted/options.ts"
import { runningWorkspace } from "../../hosted/serverFiles.ts"
import type { Driver, DriverDefinition, Found, ProviderCall, SandboxState } from "../../services/Driver.ts"
import { classifyRunloop } from "./classify.ts"
import { launchParameters } from "./launchParameters.ts"
import { DEFAULT_BLUEPRINT, type RunloopRuntimeOptions } from "./options.ts"
import { inDevbox, launchServer, sessionKeyFileEnv } from "./server.ts"

/** One devbox: its id, and its tunnel once known (made with it, listed with it, or enabled later). */
export interface Devbox {
  readonly id: string
  tunnel: Runloop.DevboxView["tunnel"]
}

/** Authenticated (a token besides the session key); its traffic counts as activity for the idle policy. */
const TUNNEL = { auth_mode: "authenticated", http_keep_alive: true } as const
/** How long a devbox may take to boot, resume or suspend (Runloop's long polls). */
const LONG_POLL = { longPoll: { timeoutMs: 5 * 60_000 } }

/** The SDK's tunnel URL: the API host without `api.`, under `tunnel.`. */
const sdkTunnelUrl = (baseUrl: string) => (port: number, key: string) =>
  `https://${port}-${key}.tunnel.${new URL(baseUrl).hostname.replace(/^api\./, "")}`

/** A listed devbox (Runloop's list filters by status only: live ones are listed, ours picked by metadata). */
const found = (devbox: Runloop.DevboxView): Found<Devbox> => ({
  sandbox: { id: devbox.id, tunnel: devbox.tunnel },
  id: devbox.id,
  tags: devbox.metadata,
  state: devbox.status === "suspended" ? "paused" : "running"
})

/** Where Runloop says a devbox is; a shut-down or failed one with Runloop's reason. */
const stateOf = (devbox: Runloop.DevboxView): SandboxState =>
  devbox.status === "shutdown" || devbox.status === "failure"
    ? {
      _tag: "gone",
      why: `Runloop devbox ${devbox.id} is ${devbox.status} (${
        devbox.failure_reason ?? devbox.shutdown_reason ?? "no reason given"
      })`,
      outOfMemory: devbox.failure_reason === "out_of_memory"
    }
    : { _tag: devbox.status === "suspended" ? "paused" : "running" }

const connect = Effect.fn("RunloopRuntime.connect")(function*(options: RunloopRuntimeOptions, call: ProviderCall) {
  yield* unsupported("RunloopRuntime", options, ["lifetime"], "Runloop ends a devbox by its idle policy (idleTimeout)")
  const idle = Duration.fromInputUnsafe(options.idleTimeout ?? "10 minutes")
  const launch = yield* launchParameters(options, idle)
  const apiKey = yield* credential(
    "RunloopRuntime",
    options.apiKey,
    "apiKey",
    "RUNLOOP_API_KEY",
    "a Runloop API key, ak_..."
  )
  const baseUrl = (options.baseUrl ??
    Option.getOrElse(yield* Config.option(Config.String("RUNLOOP_BASE_URL")), () => "https://api.runloop.ai"))
    .replace(/\/+$/, "")
  const sdk = yield* loadOptionalPeer(
    "RunloopRuntime",
    "@runloop/api-client",
    "@runloop/api-client",
    () => import("@runloop/api-client")
  )
  // The SDK's own retries are off: the hosted runtime's schedule is the only one.
  const api = new sdk.Runloop({ bearerToken: Redacted.value(apiKey), baseURL: baseUrl, maxRetries: 0 })
  const blueprint = { name: options.blueprint ?? DEFAULT_BLUEPRINT, upload: options.uploadPayload ?? true }
  const tunnelUrl = options.tunnelUrl ?? sdkTunnelUrl(baseUrl)
  const awaitRunning = (box: Devbox) =>
    call(`wait for devbox ${box.id} to run`, () => api.devboxes.awaitRunning(box.id, LONG_POLL)).pipe(
      Effect.tap((devbox) => Effect.sync(() => box.tunnel = devbox.tunnel ?? box.tunnel))
    )
  const tunnelOf = (box: Devbox) =>
    box.tunnel !== undefined && box.tunnel !== null ? Effect.succeed(box.tunnel) : call(
      `enable the tunnel of devbox ${box.id}`,
      () => api.devboxes.enableTunnel(box.id, TUNNEL)
    ).pipe(Effect.tap((tunnel) => Effect.sync(() => box.tunnel = tunnel)))

  return {
    user: { name: "user", id: 1000 },
    aliveTimeout: "90 seconds",
    create: (spec) =>
      call(`create a devbox from blueprint ${blueprint.name}`, () =>
        api.devboxes.create({
          blueprint_name: blueprint.name,
          name: `effect-sandbox-${spec.sessionId}`,
          metadata: { ...spec.tags },
          environment_variables: { ...spec.server.env, ...sessionKeyFileEnv },
          tunnel: TUNNEL,
          launch_parameters: { ...launch, user_parameters: { username: spec.user.name, uid: spec.user.id } }
        })).pipe(Effect.map((devbox) => ({ sandbox: { id: devbox.id, tunnel: devbox.tunnel }, id: devbox.id }))),
    launch: (box, spec) => Effect.andThen(awaitRunning(box), launchServer({ api, call, id: box.id }, spec, blueprint)),
    destroy: (box) =>
      call(`shut down devbox ${box.id}`, () => api.devboxes.shutdown(box.id)).pipe(
        Effect.asVoid,
        Effect.catchIf((error) => error.reason === "not-found", () => Effect.void)
      ),
    find: (tags) =>
      Effect.forEach(["running", "suspended"] as const, (status) =>
        call(`list the ${status} devboxes`, async () => {
          const listed: Array<Found<Devbox>> = []
          for await (const devbox of api.devboxes.list({ status, limit: 100 })) {
            if (Object.entries(tags).every(([k, v]) => devbox.metadata[k] === v)) listed.push(found(devbox))
          }
          return listed
        })).pipe(Effect.map((lists) => lists.flat())),
    state: (box) =>
      call(`look up devbox ${box.id}`, () => api.devboxes.retrieve(box.id)).pipe(
        Effect.map(stateOf),
        Effect.catchIf(
          (error) => error.reason === "not-found",
          () => Effect.succeed({ _tag: "gone" as const, why: `Runloop no longer has devbox ${box.id}` })
        )
      ),
    endpoint: (box, port) =>
      Effect.map(tunnelOf(box), (tunnel) => ({
        url: tunnelUrl(port, tunnel.tunnel_key),
        ...(tunnel.auth_token == null
          ? {}
          : { headers: { "x-runloop-tunnel-authorization": Redacted.make(`Bearer ${tunnel.auth_token}`) } })
      })),
    workspace: (box) => runningWorkspace(inDevbox({ api, call, id: box.id })),
    // The idle policy shuts the devbox down unless the owner shows activity (none while suspended).
    keepAlive: {
      every: Duration.divideUnsafe(idle, 3),
      touch: (box) => Effect.asVoid(call(`keep devbox ${box.id} alive`, () => api.devboxes.keepAlive(box.id)))
    },
    pause: {
      keepsMemory: false,
      pause: (box) =>
        Effect.andThen(
          call(`suspend devbox ${box.id}`, () => api.devboxes.suspend(box.id)),
          call(`wait for devbox ${box.id} to suspend`, () => api.devboxes.awaitSuspended(box.id, LONG_POLL))
        ),
      resume: (box) =>
        Effect.andThen(
          call(`resume devbox ${box.id}`, () => api.devboxes.resume(box.id)),
          Effect.asVoid(awaitRunning(box))
        )
    }
  } satisfies Driver<Devbox>
})

export const runloopDriver: DriverDefinition<RunloopRuntimeOptions, Devbox> = {
  provider: "Runloop",
  sandboxNoun: "devbox",
  kind: "runloop",
  classify: classifyRunloop,
  connect
}
