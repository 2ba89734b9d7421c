/**
 * `effect-sandbox/docker`: DockerRuntime, its warm pool and the Docker engine client.
 *
 * A subpath of its own so that only its users install its SDK: `dockerode` is an optional peer
 * dependency, loaded when this module is imported, never by the root `effect-sandbox`
 * (DESIGN.md principle 11).
 */
export { DockerEngine } from "./engines/docker/engine.ts"
export { ImageBuilder, type ImageOptions } from "./engines/docker/imageBuilder.ts"
export { PROVIDER_RETRY } from "./hosted/options.ts"
export { DockerRuntime, type DockerRuntimeOptions, DockerSandboxPool } from "./providers/docker/DockerRuntime.ts"
