/** DaytonaRuntime's options (the shared vocabulary and Daytona's own), its snapshot and the snapshot's Dockerfile. */
import type { Duration, Redacted } from "effect"
import type { HostedOptions } from "../../hosted/options.ts"
import type { UploadPayloadOption } from "../../hosted/serverFiles.ts"
import { userWorkspaceDockerfile } from "../../runtimeImage/userImage.ts"

/** The snapshot DaytonaRuntime starts from unless told otherwise (docs/runtimes/daytona.md makes it). */
export const DEFAULT_SNAPSHOT = "effect-sandbox-runtime"

/** The snapshot's Dockerfile: the runtime image, a `/workspace` its user (default 1000 `openhands`) owns, that user. */
export const snapshotDockerfile = (
  runtimeImage: string,
  options: { readonly user?: string; readonly userId?: number } = {}
): string =>
  userWorkspaceDockerfile(runtimeImage, { userId: options.userId ?? 1000, username: options.user ?? "openhands" })

/**
 * The shared options (src/hosted/options.ts) and Daytona's own. `user` (default `openhands`, uid
 * 1000, made by the snapshot's Dockerfile) owns the workspace and runs the server. `idleTimeout`
 * (whole minutes, default 15) is Daytona's auto-stop, counted from the sandbox's last activity,
 * which the owner refreshes every third of it; `lifetime` (whole minutes) is Daytona's TTL.
 */
export interface DaytonaRuntimeOptions extends HostedOptions, UploadPayloadOption {
  /** The API key (default `DAYTONA_API_KEY`, read through Effect `Config`). */
  readonly apiKey?: Redacted.Redacted<string>
  /** The API endpoint (default `DAYTONA_API_URL`, else `https://app.daytona.io/api`). */
  readonly apiUrl?: string
  /** The region (default `DAYTONA_TARGET`, else the organisation's default). */
  readonly target?: string
  /** The snapshot made from the runtime image (default `effect-sandbox-runtime`). */
  readonly snapshot?: string
  /** How long Daytona keeps a stopped sandbox before deleting it (whole minutes; default 0: at once). */
  readonly autoDeleteAfter?: Duration.Input
  /**
   * How long the signed VS Code link stays valid, from when the sandbox is handed to its runtime
   * (default 24 hours, the longest Daytona signs; at least 1 second). A browser cannot send the
   * preview token's header, so `info.urls.vscode` is Daytona's signed preview URL of its port.
   */
  readonly vscodeLinkExpiry?: Duration.Input
}
