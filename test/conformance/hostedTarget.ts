/**
 * What the hosted lifecycle suite (hostedLifecycle.ts) needs to know about a runtime whose sandbox
 * lives with a provider (an engine, a cluster, a cloud, a runtime API): each runtime's test file
 * supplies one, so a renamed option touches the target and nothing in the suite.
 */
import type { Duration, Layer } from "effect"
import type { Runtime } from "../../src/index.ts"

/** The options the suite varies; the target maps them onto its runtime's own. */
export interface LifecycleOptions {
  readonly sessionId: string
  /** `SandboxConfig.keepRuntimeAlive`: the sandbox outlives the layer's release. */
  readonly keepRuntimeAlive?: boolean
  /** The reaper's pace (each provider's `reapEvery`), short in the reaper case. */
  readonly reapEvery?: Duration.Input
}

/**
 * A runtime started in a process of its own (fixtures/lifecycleOwner.ts), which the reaper case
 * SIGKILLs: `module` exports `lifecycleLayer(args, options)`, the same builder the target's `layer`
 * uses, and `args` (JSON) say where the provider is (a stand-in's URL and key).
 */
export interface OwnerModule {
  readonly module: string
  readonly args: unknown
}

/** How a runtime's server is made to exit at start with its real options, and what it then says. */
export interface DyingServer {
  readonly layer: (sessionId: string) => Layer.Layer<Runtime, unknown>
  readonly exitCode: number
  /** A line of the server's output the start error must carry. */
  readonly output: string
}

export interface HostedLifecycleTarget {
  /** Shown in test names. */
  readonly name: string
  /** A fresh runtime with the suite's options. */
  readonly layer: (options: LifecycleOptions) => Layer.Layer<Runtime, unknown>
  /** What the provider holds of a session (sandbox ids, or its objects): the stand-in's or the service's listing. */
  readonly sandboxes: (sessionId: string) => Promise<ReadonlyArray<string>>
  /** Pause and resume, and whether memory (processes, shell variables) survives them. */
  readonly pause?: { readonly memorySurvives: boolean }
  /** A runtime on the kept sandbox of `sessionId` (the module's `attach`); its release removes it. */
  readonly attach?: { readonly layer: (sessionId: string) => Layer.Layer<Runtime, unknown> }
  /** The reaper: an owner process to kill (its module and arguments, read once the provider is up). */
  readonly reaper?: { readonly owner: () => OwnerModule }
  readonly dyingServer?: DyingServer
  /**
   * How long the provider may take to remove what was deleted (the reaper's orphan): 60 s unless
   * given (a 1.20 kubelet confirms a deleted pod only after its minute-long container GC pass).
   */
  readonly removalWithin?: Duration.Input
}
