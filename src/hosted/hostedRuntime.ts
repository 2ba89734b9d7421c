/**
 * A hosted runtime module from one driver definition: `layer` (a sandbox of its own, or the
 * session's when `sessionId` names one that exists), `layerPool` / `layerWarm` (ready sandboxes
 * handed over at once), and `attach` (the session's sandbox, which must exist). The same four verbs
 * and one options vocabulary (options.ts) for every provider; the builder underneath
 * (provisioned/provisioned.ts) does the `/alive` wait, the MCP hand-over and the client.
 */
import { type Config, type Context, Deferred, Effect, Exit, Layer, type Scope } from "effect"
import { provisionedLayer, type ProvisionedPool, provisionedPoolLayer, warmLayer } from "../provisioned/provisioned.ts"
import { InvalidOptionsError, refusalAsStartError, type RuntimeStartError } from "../schema/errors.ts"
import type { SandboxConfig } from "../schema/SandboxConfig.ts"
import { RuntimeSnapshotError, type Snapshot } from "../schema/snapshot.ts"
import type { DriverDefinition } from "../services/Driver.ts"
import type { Provisioner } from "../services/Provisioner.ts"
import type { Runtime } from "../services/Runtime.ts"
import { checkNetworkOption } from "./networkOption.ts"
import { checkHostedOptions, type HostedOptions, type PoolOptions, PROVIDER_RETRY } from "./options.ts"
import { makeProviderCall } from "./providerCall.ts"
import { provisionHosted } from "./provisioner.ts"
import { startReaper } from "./reaper.ts"
import { checkSecretsOption } from "./secretsOption.ts"
import { listSnapshots, removeSnapshot, type SnapshotStore, startingSnapshot } from "./snapshots.ts"

/** What building a hosted layer can fail with. */
export type HostedLayerError = RuntimeStartError | InvalidOptionsError | Config.ConfigError

/** The runtime's name in messages: `E2BRuntime`. */
const runtimeName = (definition: DriverDefinition<never, unknown>) => `${definition.provider}Runtime`

/** The shared options checked, then the driver connected (its credentials, SDK and shared lookups), in the scope. */
const connectDriver = Effect.fnUntraced(function*<O extends HostedOptions, S>(
  definition: DriverDefinition<O, S>,
  options: O
) {
  const name = runtimeName(definition as DriverDefinition<never, unknown>)
  const noun = definition.sandboxNoun ?? "sandbox"
  yield* checkHostedOptions(name, `a ${definition.provider} ${noun}`, options, definition.hostWorkspace === true)
  yield* checkNetworkOption(name, definition, options.network)
  yield* checkSecretsOption(name, definition, options)
  const call = makeProviderCall(definition.provider, definition.classify, options.providerRetry ?? PROVIDER_RETRY)
  return yield* definition.connect(options, call).pipe(
    Effect.mapError(refusalAsStartError),
    Effect.withSpan("hosted.connect", { attributes: { provider: definition.provider } })
  )
})

/**
 * The provisioner of one layer or pool: the driver connected, the reaper started (its first pass
 * once the first `provision` ends), then a sandbox per `provision`.
 */
const hostedProvisioner = <O extends HostedOptions, S>(
  definition: DriverDefinition<O, S>,
  options: O,
  attachOnly: boolean
) =>
(sandbox: SandboxConfig): Effect.Effect<Provisioner, HostedLayerError, Scope.Scope> =>
  Effect.gen(function*() {
    const name = runtimeName(definition as DriverDefinition<never, unknown>)
    const noun = definition.sandboxNoun ?? "sandbox"
    const driver = yield* connectDriver(definition, options)
    const fromSnapshot = yield* startingSnapshot(name, definition.provider, driver.snapshot, options)
    const firstStart = yield* Deferred.make<void>()
    yield* startReaper(definition.provider, driver, options.reapEvery, Deferred.await(firstStart))
    const ctx = {
      provider: definition.provider,
      noun,
      kind: definition.kind,
      driver,
      options,
      sandbox,
      attachOnly,
      fromSnapshot
    }
    return {
      kind: definition.kind,
      provision: (onStatus) =>
        provisionHosted(ctx, onStatus).pipe(Effect.ensuring(Deferred.done(firstStart, Exit.void)))
    } satisfies Provisioner
  })

/**
 * The driver's snapshot verbs, connected with `options` for the span of one call (listing or
 * removing): a provider without them fails saying so.
 */
const withSnapshots = <O extends HostedOptions, S, A>(
  definition: DriverDefinition<O, S>,
  options: O,
  use: (verbs: SnapshotStore) => Effect.Effect<A, RuntimeSnapshotError>
): Effect.Effect<A, RuntimeSnapshotError | HostedLayerError> =>
  Effect.scoped(
    Effect.flatMap(connectDriver(definition, options), (driver) =>
      driver.snapshot === undefined
        ? Effect.fail(
          new RuntimeSnapshotError({
            operation: "list",
            message: `${definition.provider} keeps no snapshots (docs/snapshots.md).`
          })
        )
        : use(driver.snapshot))
  )

/** The verbs every hosted runtime module exports. */
export interface HostedRuntime<O extends HostedOptions, I> {
  /** A runtime in a sandbox of its own (or the session's, when `sessionId` names one); removed on release unless kept alive. */
  readonly layer: (options?: O) => Layer.Layer<Runtime, HostedLayerError>
  /** Keep `poolSize` sandboxes started (server alive) in the background, for `layerWarm`. */
  readonly layerPool: (options: O & PoolOptions) => Layer.Layer<I, HostedLayerError>
  /** A runtime on a sandbox taken from the pool (ready at once when one is warm); the pool refills. */
  readonly layerWarm: () => Layer.Layer<Runtime, never, I>
  /**
   * A runtime on the existing sandbox of `sessionId` (one made with `keepRuntimeAlive`): resumed
   * when paused, started again when stopped; a start error when there is none.
   */
  readonly attach: (sessionId: string, options?: O) => Layer.Layer<Runtime, HostedLayerError>
  /** Our snapshots on the provider (every owner's, kept ones too), as handles `fromSnapshot` takes. */
  readonly listSnapshots: (
    options?: O
  ) => Effect.Effect<ReadonlyArray<Snapshot>, RuntimeSnapshotError | HostedLayerError>
  /** Remove a snapshot (a kept one too: this is how one ends); one already gone is no failure. */
  readonly removeSnapshot: (
    snapshot: Snapshot | string,
    options?: O
  ) => Effect.Effect<void, RuntimeSnapshotError | HostedLayerError>
}

/** The runtime module of a driver, its warm pool served under `pool`. */
export const hostedRuntime = <O extends HostedOptions, S, I>(
  definition: DriverDefinition<O, S>,
  pool: Context.Key<I, ProvisionedPool>
): HostedRuntime<O, I> => ({
  layer: (options = {} as O) => provisionedLayer(options, hostedProvisioner(definition, options, false)),
  layerPool: (options) => {
    const { sessionId: _, poolSize, ...shared } = options
    return provisionedPoolLayer(
      pool,
      {
        runtime: runtimeName(definition as DriverDefinition<never, unknown>),
        size: poolSize,
        what: `${definition.provider} ${definition.sandboxNoun ?? "sandbox"}`
      },
      shared,
      hostedProvisioner(definition, shared as unknown as O, false)
    )
  },
  layerWarm: () => warmLayer(pool, Effect.succeed),
  attach: (sessionId, options = {} as O) => {
    const attached = { ...options, sessionId }
    return provisionedLayer(attached, hostedProvisioner(definition, attached, true))
  },
  listSnapshots: (options = {} as O) =>
    withSnapshots(definition, options, (verbs) => listSnapshots(definition.provider, verbs)),
  removeSnapshot: (snapshot, options = {} as O) =>
    withSnapshots(definition, options, (verbs) => removeSnapshot(verbs, snapshot))
})
