/** RunloopRuntime's options (the shared vocabulary and what only Runloop has), its blueprint and the blueprint's Dockerfile. */
import type { Redacted } from "effect"
import type { HostedOptions } from "../../hosted/options.ts"
import type { UploadPayloadOption } from "../../hosted/serverFiles.ts"
import { userWorkspaceDockerfile } from "../../runtimeImage/userImage.ts"

/** Runloop's named sizes (X_SMALL 0.5 CPU / 1 GiB ... XX_LARGE 8 CPU / 32 GiB, as its docs list them). */
export type RunloopSize = "X_SMALL" | "SMALL" | "MEDIUM" | "LARGE" | "X_LARGE" | "XX_LARGE"

/** The blueprint RunloopRuntime starts from unless told otherwise (docs/runtimes/runloop.md makes it). */
export const DEFAULT_BLUEPRINT = "effect-sandbox-runtime"

/** The blueprint's Dockerfile: the runtime image, a `/workspace` its user (default 1000 `user`) owns, that user. */
export const blueprintDockerfile = (
  runtimeImage: string,
  user: { readonly user?: string; readonly userId?: number } = {}
): string => userWorkspaceDockerfile(runtimeImage, { userId: user.userId ?? 1000, username: user.user ?? "user" })

/**
 * The shared options (src/hosted/options.ts) and Runloop's own. `cpus` and `memoryMiB` go together
 * (Runloop's custom size: CPU 0.5, 1 or even up to 16; memory 1 or an even number of GiB up to 64,
 * 2 to 8 GiB per CPU); `idleTimeout` (default 10 minutes, 1 minute to 48 hours) is the idle policy.
 */
export interface RunloopRuntimeOptions extends HostedOptions, UploadPayloadOption {
  /** The API key (default: `RUNLOOP_API_KEY`, read through Effect Config). */
  readonly apiKey?: Redacted.Redacted<string>
  /** The API endpoint (default `RUNLOOP_BASE_URL`, else `https://api.runloop.ai`). */
  readonly baseUrl?: string
  /** The blueprint made from the runtime image (default `effect-sandbox-runtime`). */
  readonly blueprint?: string
  /** One of Runloop's named sizes, instead of `cpus` and `memoryMiB` (default: the blueprint's, else Runloop's). */
  readonly size?: RunloopSize
  /** The disk of a custom size (`cpus` and `memoryMiB`), in GiB: even, 2 to 64. */
  readonly diskGiB?: number
  /**
   * How long one API request may go unanswered before it fails and is sent again (default the
   * SDK's 30 s; a long poll gets its own length on top). It also ends a request the SDK's HTTP/2
   * transport would wait on for ever, its connection cut without an error.
   */
  readonly requestTimeoutMs?: number
  /** The URL of a tunnel port (default as the SDK's `getTunnelUrl` builds it); a proxy may map it elsewhere. */
  readonly tunnelUrl?: (port: number, tunnelKey: string) => string
}
