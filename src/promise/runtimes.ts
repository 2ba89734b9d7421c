/**
 * The runtimes the Promise API creates by name, with each one's own options. Each runtime's module
 * is imported when it is asked for, so `effect-sandbox/promise` loads no runtime it does not use
 * (and none of their optional SDKs: building the layer is what loads those, as in the Effect API).
 */
import type { Layer } from "effect"
import { rmSync } from "node:fs"
import type { HostedRuntime } from "../hosted/hostedRuntime.ts"
import type { HostedOptions } from "../hosted/options.ts"
import type { CliRuntimeOptions } from "../layers/CliRuntime.ts"
import type { LocalRuntimeOptions } from "../layers/LocalRuntime.ts"
import type { DaytonaRuntimeOptions } from "../providers/daytona/options.ts"
import type { DockerRuntimeOptions } from "../providers/docker/options.ts"
import type { E2BRuntimeOptions } from "../providers/e2b/options.ts"
import type { KubernetesRuntimeOptions } from "../providers/kubernetes/options.ts"
import type { ModalRuntimeOptions } from "../providers/modal/options.ts"
import type { RemoteRuntimeOptions } from "../providers/remote/options.ts"
import type { RunloopRuntimeOptions } from "../providers/runloop/options.ts"
import type { Runtime, RuntimeInfo } from "../services/Runtime.ts"

/** Each runtime's name and the options its layer takes (the Effect API's, documented there). */
export interface RuntimeOptionsByName {
  readonly cli: CliRuntimeOptions
  readonly local: LocalRuntimeOptions
  readonly docker: DockerRuntimeOptions
  readonly kubernetes: KubernetesRuntimeOptions
  readonly e2b: E2BRuntimeOptions
  readonly daytona: DaytonaRuntimeOptions
  readonly modal: ModalRuntimeOptions
  readonly runloop: RunloopRuntimeOptions
  readonly remote: RemoteRuntimeOptions
}

export type RuntimeName = keyof RuntimeOptionsByName

/** A runtime's layer; its error is a typed start failure the Promise API throws as a `SandboxError`. */
export type RuntimeLayer = Layer.Layer<Runtime, { readonly _tag: string; readonly message: string }>

const LAYERS: { readonly [N in RuntimeName]: (options: RuntimeOptionsByName[N]) => Promise<RuntimeLayer> } = {
  cli: async (options) => (await import("../layers/CliRuntime.ts")).CliRuntime.layer(options),
  local: async (options) => (await import("../layers/LocalRuntime.ts")).LocalRuntime.layer(options),
  docker: async (options) => (await import("../providers/docker/DockerRuntime.ts")).DockerRuntime.layer(options),
  kubernetes: async (options) =>
    (await import("../providers/kubernetes/KubernetesRuntime.ts")).KubernetesRuntime.layer(options),
  e2b: async (options) => (await import("../providers/e2b/E2BRuntime.ts")).E2BRuntime.layer(options),
  daytona: async (options) => (await import("../providers/daytona/DaytonaRuntime.ts")).DaytonaRuntime.layer(options),
  modal: async (options) => (await import("../providers/modal/ModalRuntime.ts")).ModalRuntime.layer(options),
  runloop: async (options) => (await import("../providers/runloop/RunloopRuntime.ts")).RunloopRuntime.layer(options),
  remote: async (options) => (await import("../providers/remote/RemoteRuntime.ts")).RemoteRuntime.layer(options)
}

/** A runtime module's verbs over the snapshots it keeps (docs/snapshots.md). */
export type SnapshotModule<O extends HostedOptions> = Pick<
  HostedRuntime<O, unknown>,
  "listSnapshots" | "removeSnapshot"
>

/**
 * The modules whose snapshots can be listed and removed (every hosted one: those without snapshots
 * fail saying so); CliRuntime, LocalRuntime and KubernetesRuntime keep none.
 */
type SnapshotRuntimeName = Exclude<RuntimeName, "cli" | "local" | "kubernetes">

const SNAPSHOT_MODULES: {
  readonly [N in SnapshotRuntimeName]: () => Promise<SnapshotModule<RuntimeOptionsByName[N]>>
} = {
  docker: async () => (await import("../providers/docker/DockerRuntime.ts")).DockerRuntime,
  e2b: async () => (await import("../providers/e2b/E2BRuntime.ts")).E2BRuntime,
  daytona: async () => (await import("../providers/daytona/DaytonaRuntime.ts")).DaytonaRuntime,
  modal: async () => (await import("../providers/modal/ModalRuntime.ts")).ModalRuntime,
  runloop: async () => (await import("../providers/runloop/RunloopRuntime.ts")).RunloopRuntime,
  remote: async () => (await import("../providers/remote/RemoteRuntime.ts")).RemoteRuntime
}

/** The snapshot verbs of the runtime called `name`; undefined for one that keeps no snapshots. */
export const snapshotModule = (name: RuntimeName): Promise<SnapshotModule<HostedOptions>> | undefined =>
  Object.hasOwn(SNAPSHOT_MODULES, name)
    ? (SNAPSHOT_MODULES[name as SnapshotRuntimeName]() as Promise<SnapshotModule<HostedOptions>>)
    : undefined

/** Every runtime's name, in the order the docs list them. */
export const RUNTIME_NAMES = Object.keys(LAYERS) as ReadonlyArray<RuntimeName>

/** Whether `name` names a runtime (the Promise API is called from plain JavaScript too). */
export const isRuntimeName = (name: string): name is RuntimeName => Object.hasOwn(LAYERS, name)

/** The layer of the runtime called `name`, built with `options`. */
export const layerByName = <N extends RuntimeName>(name: N, options: RuntimeOptionsByName[N]): Promise<RuntimeLayer> =>
  LAYERS[name](options)

/**
 * What must be removed synchronously if the process exits with the sandbox open: CliRuntime's
 * temporary workspace (its processes die with the process; LocalRuntime's server sees its owner
 * gone and removes its own; a container's lease goes stale and its watchdog removes it).
 */
export const atExit = <N extends RuntimeName>(name: N, options: RuntimeOptionsByName[N], info: RuntimeInfo) => {
  const chosen = options as { readonly workspace?: unknown; readonly keepWorkspace?: unknown }
  const temporary = name === "cli" && chosen.workspace === undefined && chosen.keepWorkspace !== true
  return temporary ? () => rmSync(info.workspace, { recursive: true, force: true }) : () => undefined
}
