/**
 * The build endpoints' side of a backend (spec §14: `/registry_prefix`, `/image_exists`, `/build`,
 * `/build_status`): where images go, whether one exists, and builds of a client's context.
 * OpenHands' client builds its runtime image this way when the API's engine lacks it.
 */
import { Context, type Effect } from "effect"
import type { ApiError } from "./errors.ts"

/**
 * `/build_status`'s `status`: OpenHands polls until one of its last six (`CANCELLED` and
 * `EXPIRED` are never answered here).
 */
export type BuildStatus = "RUNNING" | "SUCCESS" | "FAILURE" | "INTERNAL_ERROR" | "TIMEOUT"

export interface BuildState {
  readonly status: BuildStatus
  /** The built image (`SUCCESS`). */
  readonly image?: string
  /** What went wrong (`FAILURE`, `INTERNAL_ERROR`, `TIMEOUT`). */
  readonly error?: string
}

export interface ImageInfo {
  readonly uploadTime: string
  readonly sizeBytes: number
}

/** A build context the request streamed to a file of its own (a gzip tar), and how to remove it. */
export interface UploadedContext {
  readonly path: string
  readonly remove: Effect.Effect<void>
}

export class Images extends Context.Service<Images, {
  /** What OpenHands puts before `/runtime` in the images it asks to build. */
  readonly registryPrefix: string
  /** The largest `context` part a `/build` may upload (its base64 text), in bytes. */
  readonly maxUploadBytes: number
  readonly info: (image: string) => Effect.Effect<ImageInfo | undefined>
  /**
   * Start building `context` as `tags[0]` (then tagged with the rest); the build's id. The build
   * owns the context from then on and removes it when it ends; a refused build removes it at once.
   */
  readonly build: (context: UploadedContext, tags: ReadonlyArray<string>) => Effect.Effect<string, ApiError>
  /** A build's state; undefined for an id never given (or given by an earlier run of the server). */
  readonly status: (buildId: string) => Effect.Effect<BuildState | undefined>
}>()("effect-sandbox/runtimeApi/Images") {}
