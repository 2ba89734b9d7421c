/**
 * The build endpoints' side of a backend (spec §14: `/registry_prefix`, `/image_exists`, `/build`,
 * `/build_status`): where images go, whether one exists, and builds of a client's context.
 * OpenHands' client builds its runtime image this way when the API's engine lacks it.
 */
import { Context, type Effect } from "effect"
import type { ApiError } from "./errors.ts"

/** `/build_status`'s `status`: OpenHands polls until one of the last five. */
export type BuildStatus = "RUNNING" | "SUCCESS" | "FAILURE" | "INTERNAL_ERROR"

export interface BuildState {
  readonly status: BuildStatus
  /** The built image (`SUCCESS`). */
  readonly image?: string
  /** What went wrong (`FAILURE`, `INTERNAL_ERROR`). */
  readonly error?: string
}

export interface ImageInfo {
  readonly uploadTime: string
  readonly sizeBytes: number
}

export class Images extends Context.Service<Images, {
  /** What OpenHands puts before `/runtime` in the images it asks to build. */
  readonly registryPrefix: string
  readonly info: (image: string) => Effect.Effect<ImageInfo | undefined>
  /** Start building a gzip tar `context` as `tags[0]` (then tagged with the rest); the build's id. */
  readonly build: (context: Uint8Array, tags: ReadonlyArray<string>) => Effect.Effect<string, ApiError>
  /** A build's state; undefined for an id never given (or given by an earlier run of the server). */
  readonly status: (buildId: string) => Effect.Effect<BuildState | undefined>
}>()("effect-sandbox/runtimeApi/Images") {}
