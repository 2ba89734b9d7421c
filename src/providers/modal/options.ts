/** ModalRuntime's options: the shared vocabulary and what only Modal has. */
import type { Redacted } from "effect"
import type { HostedOptions } from "../../hosted/options.ts"

/**
 * The shared options (src/hosted/options.ts) and Modal's own. Modal counts `lifetime` (default 24
 * hours, its maximum) and `idleTimeout` (default 5 minutes, at least 3 s) in whole seconds; the
 * owner keeps its sandbox busy through the tunnel every third of the idle timeout, so only an
 * orphan idles. A sandbox's command runs as root: `user` and `userId` are refused.
 */
export interface ModalRuntimeOptions extends HostedOptions {
  /** The token pair (default: `MODAL_TOKEN_ID` / `MODAL_TOKEN_SECRET`, through Effect Config). */
  readonly tokenId?: Redacted.Redacted<string>
  readonly tokenSecret?: Redacted.Redacted<string>
  /** The Modal environment (default the profile's, `MODAL_ENVIRONMENT`). */
  readonly environment?: string
  /** The API server (default `MODAL_SERVER_URL`, else the profile's, else Modal's `https://api.modal.com:443`). */
  readonly serverUrl?: string
  /** The app the sandboxes belong to (created when missing; default `effect-sandbox`). */
  readonly app?: string
  /**
   * The image: the name of a Modal image published from the runtime image (default
   * `effect-sandbox-runtime`, made as docs/runtimes/modal.md says).
   */
  readonly image?: string
  /** Instead of `image`: a registry reference Modal pulls (the runtime image pushed to a public registry). */
  readonly registryImage?: string
}
