/**
 * E2BRuntime: the action server in an E2B sandbox (a Firecracker microVM), through the official
 * `e2b` SDK, reached over E2B's port exposure with the shared HTTP client. The driver
 * (driver.ts) says what E2B can do; the hosted runtime (src/hosted/) does the rest. See
 * docs/runtimes/e2b.md.
 */
import { Context, type Redacted } from "effect"
import { hostedRuntime } from "../../hosted/hostedRuntime.ts"
import type { HostedOptions } from "../../hosted/options.ts"
import type { ProvisionedPool } from "../../layers/internal/provisioned.ts"
import { e2bDriver } from "./driver.ts"

/** The shared options (src/hosted/options.ts) and E2B's own. */
export interface E2BRuntimeOptions extends HostedOptions {
  /** The team's API key (default: the `E2B_API_KEY` environment variable, through Effect Config). */
  readonly apiKey?: Redacted.Redacted<string>
  /** Template name or id (default `effect-sandbox-runtime`: made from the runtime image, docs/runtimes/e2b.md). */
  readonly template?: string
  /**
   * When the template lacks the payload, upload it and run it with the template's Node (22.19+)
   * (default true; false: such a template is a start error).
   */
  readonly uploadPayload?: boolean
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

/** Warm E2B sandboxes waiting for a runtime. */
export class E2BSandboxPool extends Context.Service<E2BSandboxPool, ProvisionedPool>()(
  "effect-sandbox/E2BSandboxPool"
) {}

export const E2BRuntime = hostedRuntime(e2bDriver, E2BSandboxPool)
