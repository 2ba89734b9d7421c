/**
 * DockerRuntime's container: the create options of one session's sandbox (the server as its
 * command, the key's digest, the owner's labels and lease, the workspace mounted), and the engine's
 * refusal of a disk quota said plainly.
 */
import type Docker from "dockerode"
import { Redacted } from "effect"
import { IMAGE_NODE, IMAGE_SERVER, IMAGE_WORKSPACE, sandboxContainerSpec } from "../../engines/docker/containerSpec.ts"
import { LABEL, type OurLabels } from "../../engines/docker/labels.ts"
import { containerUser } from "../../runtimeImage/sandboxUser.ts"
import { type ProviderError, RuntimeStartError } from "../../schema/errors.ts"
import { sessionKeyDigestEnv } from "../../server/sessionKey.ts"
import { VSCODE_PORT, vscodeEnv } from "../../serverStart/serverTools.ts"
import type { SandboxSpec } from "../../services/Driver.ts"
import type { DockerRuntimeOptions } from "./options.ts"
import { LEASE_IN_CONTAINER, LEASE_MOUNT } from "./ownerLease.ts"

const MIB = 1024 ** 2

/** Container options for a new sandbox: the server command, its environment and the owner's labels. */
export const containerSpec = (input: {
  readonly name: string
  readonly image: string
  readonly spec: SandboxSpec
  readonly workspace: string
  /** The workspace, when we created it (so whoever removes the container removes it too). */
  readonly temporaryWorkspace: string | undefined
  readonly options: DockerRuntimeOptions
  /** The owner's lease directory, watched by the server; undefined for a kept-alive container, which outlives its owner. */
  readonly lease: string | undefined
  /** The sandboxes' network (engines/docker/network.ts). */
  readonly network: string
}): Docker.ContainerCreateOptions => {
  const { options, spec } = input
  const { sandbox } = spec
  const hostNetwork = sandbox.useHostNetwork
  // VS Code's port only with the plugin (and not on the host's network, where 8001 may be anyone's).
  const vscode = options.vscode === true && !hostNetwork
  const env: Record<string, string> = { ...spec.server.env, ...sessionKeyDigestEnv(Redacted.value(spec.sessionKey)) }
  if (!vscode) { for (const name of Object.keys(vscodeEnv(options))) delete env[name] }
  return sandboxContainerSpec({
    name: input.name,
    image: input.image,
    sessionId: spec.sessionId,
    // The server defaults to loopback: in its own network namespace it must listen on all
    // interfaces to be reached through the published port (with the key it was given).
    command: spec.server.argv({
      node: IMAGE_NODE,
      entry: IMAGE_SERVER,
      workingDir: IMAGE_WORKSPACE,
      host: hostNetwork ? "127.0.0.1" : "0.0.0.0",
      ...(hostNetwork ? { port: 0 } : {}),
      ...(input.lease === undefined ? {} : { ownerLease: LEASE_IN_CONTAINER })
    }),
    // Not the key itself: its digest (engines/docker/sessionKey.ts).
    env,
    user: containerUser(spec.user.id),
    workingDir: IMAGE_WORKSPACE,
    // The owner tags (src/hosted/ownerTags.ts) are labels of ours by the same names.
    labels: {
      ...(spec.tags as OurLabels),
      [LABEL.temporaryWorkspace]: input.temporaryWorkspace,
      [LABEL.ownerLease]: input.lease
    },
    ports: [spec.server.port, ...(vscode ? [VSCODE_PORT] : []), ...(options.appPorts ?? [])],
    binds: [
      `${input.workspace}:${IMAGE_WORKSPACE}:rw`,
      ...(input.lease === undefined ? [] : [`${input.lease}:${LEASE_MOUNT}:ro`])
    ],
    limits: {
      memoryBytes: options.memoryMiB === undefined ? undefined : options.memoryMiB * MIB,
      cpus: options.cpus,
      pidsLimit: options.pidsLimit,
      storageBytes: options.storageBytes
    },
    sandbox,
    network: input.network
  })
}

/**
 * The engine's refusal of a disk quota, said plainly: which option, and what the engine needs to
 * enforce it. The refused create left no container behind.
 */
export const explainStorageRefusal = (storageBytes: number | undefined) => (error: ProviderError | RuntimeStartError) =>
  storageBytes !== undefined && /storage-?opt/i.test(error.message)
    ? new RuntimeStartError({
      message: `DockerRuntime's storageBytes (${storageBytes}) needs an engine that enforces container disk quotas ` +
        `(overlay2 on xfs mounted with 'pquota', or btrfs, zfs, devicemapper); this engine refused it. ` +
        `Leave storageBytes unset on this engine. ${error.message}`,
      ...(error._tag === "ProviderError" ? { reason: "provider" as const, provider: error } : {})
    })
    : error
