/**
 * DockerRuntime: the action server in a Docker container, reached over an engine-assigned port on
 * 127.0.0.1 (or the container's bridge address on a local engine) with the shared HTTP client. The
 * driver (driver.ts) says what Docker can do; the hosted runtime (src/hosted/) does the rest. The
 * runtime image is built once per (base image, payload, Node, user) and reused; each layer holds a
 * lease over its containers (ownerLease.ts): an orphan stops itself when it goes stale, and a
 * reaper removes it with its temporary workspace. See docs/runtimes/docker.md.
 */
import { Context } from "effect"
import { hostedRuntime } from "../../hosted/hostedRuntime.ts"
import type { ProvisionedPool } from "../../provisioned/provisioned.ts"
import { dockerDriver } from "./driver.ts"

export type { DockerRuntimeOptions } from "./options.ts"

/** Warm containers waiting for a runtime. */
export class DockerSandboxPool extends Context.Service<DockerSandboxPool, ProvisionedPool>()(
  "effect-sandbox/DockerSandboxPool"
) {}

export const DockerRuntime = hostedRuntime(dockerDriver, DockerSandboxPool)
