/** E2BRuntime's options: the shared vocabulary and what only E2B has. */
import type { Duration, Redacted } from "effect"
import type { HostedOptions } from "../../hosted/options.ts"
import type { UploadPayloadOption } from "../../hosted/serverFiles.ts"

/** The shared options (src/hosted/options.ts) and E2B's own. */
export interface E2BRuntimeOptions extends HostedOptions, UploadPayloadOption {
  /** The team's API key (default: the `E2B_API_KEY` environment variable, through Effect Config). */
  readonly apiKey?: Redacted.Redacted<string>
  /**
   * E2B's cap on a sandbox's life from its start or resume, the team plan's: default `"1 hour"`
   * (Hobby's); `"24 hours"` on Pro. Renewals ask only what is left of it and stop there (lifetime.ts).
   */
  readonly lifetime?: Duration.Input
  /** Template name or id (default `effect-sandbox-runtime`: made from the runtime image, docs/runtimes/e2b.md). */
  readonly template?: string
  /** The SDK's connection options (default: theirs, from `E2B_DOMAIN`, `E2B_API_URL`, `E2B_SANDBOX_URL`). */
  readonly domain?: string
  readonly apiUrl?: string
  readonly sandboxUrl?: string
  readonly requestTimeoutMs?: number
  /**
   * The URL of a sandbox host (`getHost(port)`: `<port>-<sandboxId>.<domain>`), default
   * `https://<host>`; a proxy or a self-hosted cluster without wildcard DNS may map it elsewhere.
   */
  readonly hostUrl?: (host: string) => string
}
