/**
 * The create options of every sandbox container, whoever starts it: DockerRuntime (one layer, one
 * container) and the runtime API server (src/runtimeApi/, containers that outlive it). What must
 * not differ between them is here once: the labels that mark a sandbox ours, the limits, ports
 * published on 127.0.0.1 only, the network that keeps neighbours apart (network.ts), the capabilities
 * dropped, `no-new-privileges`, GPUs, the operator's volumes and OpenHands' `docker_runtime_kwargs`.
 * What differs (the command, its environment, extra labels and mounts) is the caller's.
 */
import type Docker from "dockerode"
import { mayBeRoot, ROOT_CAPABILITIES } from "../../runtimeImage/capabilities.ts"
import type { SandboxConfig } from "../../schema/SandboxConfig.ts"
import { LABEL, type OurLabels, ourLabels } from "./labels.ts"
import { parseVolumes } from "./volumes.ts"

/** Where the runtime image (imageBuilder.ts) keeps the Node binary: stdio MCP servers written for Node can run with it. */
export const IMAGE_NODE = "/opt/effect-sandbox/bin/node"
/** The action server's script in the runtime image. */
export const IMAGE_SERVER = "/opt/effect-sandbox/payload/server.mjs"
/** The workspace inside a sandbox container (made by the image preflight, writable by the sandbox user). */
export const IMAGE_WORKSPACE = "/workspace"

const GIB = 1024 ** 3

/** Docker's defaults for a sandbox: 4 GiB of memory, 2 CPUs, 4096 processes. */
export const DEFAULT_LIMITS = { memoryBytes: 4 * GIB, cpus: 2, pidsLimit: 4096 } as const

export interface ContainerLimits {
  readonly memoryBytes?: number | undefined
  readonly cpus?: number | undefined
  readonly pidsLimit?: number | undefined
  /** Docker's `--storage-opt size` (only some engines enforce it: see container.ts). */
  readonly storageBytes?: number | undefined
}

export interface SandboxContainer {
  readonly name: string
  readonly image: string
  readonly sessionId: string
  /** The full command (the image's entrypoint is replaced by nothing: the command is what runs). */
  readonly command: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
  /** The command's directory (the image's when undefined). */
  readonly workingDir?: string | undefined
  /** The user the command runs as (the image's when undefined). */
  readonly user?: string | undefined
  /**
   * Our labels beyond the ones every sandbox carries (managed, session, creation time, version);
   * every other label of ours is written empty, so that the image's cannot stand in (labels.ts).
   */
  readonly labels: OurLabels
  /** Container ports published on 127.0.0.1, each on an engine-chosen host port. */
  readonly ports: ReadonlyArray<number>
  /** Bind mounts beyond the operator's `sandbox.volumes`. */
  readonly binds: ReadonlyArray<string>
  readonly limits: ContainerLimits
  /** Host networking, GPUs, volumes and raw create options come from here. */
  readonly sandbox: SandboxConfig
  /**
   * The network the container joins (network.ts's id: inter-container communication off); ignored
   * with `sandbox.useHostNetwork`, the operator's opt-out of every network boundary.
   */
  readonly network: string
  /** An OCI runtime other than the engine's default (`sysbox-runc`, `runsc`). */
  readonly ociRuntime?: string | undefined
}

/** OpenHands' GPU request: every GPU, or the ones `cudaVisibleDevices` lists. */
const gpuRequests = (sandbox: SandboxConfig) =>
  sandbox.enableGpu
    ? [{
      Driver: "",
      Count: sandbox.cudaVisibleDevices === null ? -1 : 0,
      DeviceIDs: sandbox.cudaVisibleDevices === null ? [] : sandbox.cudaVisibleDevices.split(","),
      Capabilities: [["gpu"]],
      Options: {}
    }]
    : undefined

/** The create options of a sandbox container (OpenHands' init_container, with our labels and limits). */
export const sandboxContainerSpec = (input: SandboxContainer): Docker.ContainerCreateOptions => {
  const { limits, sandbox } = input
  const gpu = gpuRequests(sandbox)
  const env = {
    ...input.env,
    ...(sandbox.cudaVisibleDevices === null ? {} : { CUDA_VISIBLE_DEVICES: sandbox.cudaVisibleDevices })
  }
  const spec: Docker.ContainerCreateOptions = {
    name: input.name,
    Image: input.image,
    Entrypoint: [],
    Cmd: [...input.command],
    ...(input.user === undefined ? {} : { User: input.user }),
    ...(input.workingDir === undefined ? {} : { WorkingDir: input.workingDir }),
    Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
    Labels: ourLabels({
      [LABEL.managed]: "true",
      [LABEL.session]: input.sessionId,
      [LABEL.createdAt]: new Date().toISOString(),
      [LABEL.version]: "0.1.0",
      ...input.labels
    }),
    ExposedPorts: Object.fromEntries(input.ports.map((p) => [`${p}/tcp`, {}])),
    HostConfig: {
      Init: true,
      ...(sandbox.useHostNetwork
        ? { NetworkMode: "host" }
        : {
          NetworkMode: input.network,
          PortBindings: Object.fromEntries(
            input.ports.map((p) => [`${p}/tcp`, [{ HostIp: "127.0.0.1", HostPort: "" }]])
          )
        }),
      // No capability but what a root command needs (none for the sandbox user), and no gaining any
      // through set-uid or file-capability binaries (runtimeImage/capabilities.ts says why).
      CapDrop: ["ALL"],
      ...(mayBeRoot(input.user) ? { CapAdd: [...ROOT_CAPABILITIES] } : {}),
      SecurityOpt: ["no-new-privileges"],
      Binds: [...input.binds, ...parseVolumes(sandbox.volumes)],
      Memory: limits.memoryBytes ?? DEFAULT_LIMITS.memoryBytes,
      NanoCpus: Math.round((limits.cpus ?? DEFAULT_LIMITS.cpus) * 1e9),
      PidsLimit: limits.pidsLimit ?? DEFAULT_LIMITS.pidsLimit,
      ...(limits.storageBytes === undefined ? {} : { StorageOpt: { size: String(limits.storageBytes) } }),
      ...(gpu === undefined ? {} : { DeviceRequests: gpu }),
      ...(input.ociRuntime === undefined ? {} : { Runtime: input.ociRuntime })
    }
  }
  // OpenHands' docker_runtime_kwargs: raw create options, merged last (HostConfig merged key by key;
  // their Labels are added under ours, which they can neither drop nor replace).
  // The operator's escape hatch: it can give back any capability, privileges or network taken above.
  const raw = (sandbox.dockerRuntimeKwargs ?? {}) as Docker.ContainerCreateOptions
  return {
    ...spec,
    ...raw,
    Labels: { ...raw.Labels, ...spec.Labels },
    HostConfig: { ...spec.HostConfig, ...raw.HostConfig }
  }
}
