/**
 * What the Promise API adds to the runtimes by name (runtime/byName.ts): each hosted runtime's
 * snapshot verbs, imported when asked for, and what must go if the process exits with a sandbox open.
 */
import { rmSync } from "node:fs"
import type { HostedRuntime } from "../hosted/hostedRuntime.ts"
import type { HostedOptions } from "../hosted/options.ts"
import type { RuntimeName, RuntimeOptionsByName } from "../runtime/byName.ts"
import type { RuntimeInfo } from "../services/Runtime.ts"

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
