/**
 * The runtimes by name, each with its own options: the Promise API's `Sandbox.create(name)` and the
 * CLI's `--runtime`. Each runtime's module is imported when it is asked for, so a caller loads no
 * runtime it does not use (nor their optional SDKs: building the layer is what loads those, as in
 * the Effect API), and the CLI's start does not evaluate nine runtimes to run one.
 */
import type { Layer } from "effect"
import type { CliRuntimeOptions } from "../layers/CliRuntime.ts"
import type { LocalRuntimeOptions } from "../layers/LocalRuntime.ts"
import type { DaytonaRuntimeOptions } from "../providers/daytona/options.ts"
import type { DockerRuntimeOptions } from "../providers/docker/options.ts"
import type { E2BRuntimeOptions } from "../providers/e2b/options.ts"
import type { KubernetesRuntimeOptions } from "../providers/kubernetes/options.ts"
import type { ModalRuntimeOptions } from "../providers/modal/options.ts"
import type { RemoteRuntimeOptions } from "../providers/remote/options.ts"
import type { RunloopRuntimeOptions } from "../providers/runloop/options.ts"
import type { Runtime } from "../services/Runtime.ts"

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

/** Every runtime's name, in the order the docs list them. */
export const RUNTIME_NAMES = Object.keys(LAYERS) as ReadonlyArray<RuntimeName>

/** Whether `name` names a runtime (the Promise API is called from plain JavaScript too). */
export const isRuntimeName = (name: string): name is RuntimeName => Object.hasOwn(LAYERS, name)

/** The layer of the runtime called `name`, built with `options`. */
export const layerByName = <N extends RuntimeName>(name: N, options: RuntimeOptionsByName[N]): Promise<RuntimeLayer> =>
  LAYERS[name](options)
