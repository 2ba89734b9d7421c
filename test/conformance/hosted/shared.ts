/**
 * What the hosted lifecycle targets share: the suite's options in the runtimes' shared vocabulary,
 * how every hosted runtime's action server is made to die at start with a real option, and the
 * target of a cloud runtime, which differs from another only by its layer and its listing.
 */
import type { Duration, Layer } from "effect"
import { type Runtime, SandboxConfig } from "../../../src/index.ts"
import type { HostedLifecycleTarget, LifecycleOptions } from "../hostedTarget.ts"

/** The options the suite gives a cloud runtime, by the names the runtimes share. */
export interface SharedOptions {
  readonly sessionId: string
  readonly sandbox?: SandboxConfig
  readonly reapEvery?: Duration.Input
  readonly env?: Readonly<Record<string, string>>
}

/** The suite's options as the runtimes take them (`sessionId`, `sandbox.keepRuntimeAlive`, `reapEvery`). */
export const sharedOptions = (lifecycle: LifecycleOptions): SharedOptions => ({
  sessionId: lifecycle.sessionId,
  sandbox: new SandboxConfig({ keepRuntimeAlive: lifecycle.keepRuntimeAlive ?? false }),
  ...(lifecycle.reapEvery === undefined ? {} : { reapEvery: lifecycle.reapEvery })
})

/**
 * The `env` option reaches the server's environment, and the server refuses a limit that is not
 * a positive integer (src/executor/limits.ts) before it listens.
 */
export const DYING_SERVER_ENV = { EFFECT_SANDBOX_MAX_PROCESSES: "0" }

/** The line the server prints as it exits (with code 1). */
export const DYING_SERVER_OUTPUT = "EFFECT_SANDBOX_MAX_PROCESSES must be a positive integer, not \"0\""

/** A cloud runtime: a layer of its own options and the shared ones, the module that exports `lifecycleLayer`, its listing. */
export interface CloudRuntime<Args> {
  readonly name: string
  /**
   * `import.meta.filename` of the module whose `lifecycleLayer` the owner process builds; none for
   * a runtime without a reaper of its own.
   */
  readonly module?: string
  readonly layer: (args: Args, shared: SharedOptions) => Layer.Layer<Runtime, unknown>
  /** The runtime module's `attach(sessionId)` (default: a layer given the session id). */
  readonly attach?: (args: Args, sessionId: string) => Layer.Layer<Runtime, unknown>
  readonly sandboxes: (args: Args, sessionId: string) => Promise<ReadonlyArray<string>>
  readonly pause?: HostedLifecycleTarget["pause"]
}

/**
 * What a cloud runtime's module exports: `lifecycleLayer`, which the owner process builds, and the
 * target of the runtime on a provider found by `args` (read once it is up): a second layer with the
 * session id attaches to a kept sandbox, the reaper (with a `module`) judges owners, and the server
 * dies at start by `DYING_SERVER_ENV`.
 */
export const cloudRuntime = <Args>(cloud: CloudRuntime<Args>) => {
  const lifecycleLayer = (args: Args, lifecycle: LifecycleOptions) => cloud.layer(args, sharedOptions(lifecycle))
  const lifecycle = (args: () => Args): HostedLifecycleTarget => ({
    name: cloud.name,
    layer: (options) => lifecycleLayer(args(), options),
    sandboxes: (sessionId) => cloud.sandboxes(args(), sessionId),
    ...(cloud.pause === undefined ? {} : { pause: cloud.pause }),
    attach: {
      layer: (sessionId) =>
        cloud.attach === undefined ? lifecycleLayer(args(), { sessionId }) : cloud.attach(args(), sessionId)
    },
    ...(cloud.module === undefined ? {} : { reaper: { owner: () => ({ module: cloud.module!, args: args() }) } }),
    dyingServer: {
      layer: (sessionId) => cloud.layer(args(), { sessionId, env: DYING_SERVER_ENV }),
      exitCode: 1,
      output: DYING_SERVER_OUTPUT
    }
  })
  return { lifecycleLayer, lifecycle }
}
