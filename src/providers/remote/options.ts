/**
 * RemoteRuntime's options: the shared vocabulary (src/hosted/options.ts) and the runtime API's
 * own, named after OpenHands' `remote_runtime_*` settings (spec §15.1).
 */
import { type Duration, Effect, type Redacted, Schema } from "effect"
import type { HostedOptions } from "../../hosted/options.ts"
import { unsupported } from "../../hosted/options.ts"
import { decodeOptions } from "../../schema/issues.ts"
import type { RemoteSchedules } from "./policies.ts"

/** The shared options and the remote runtime's own. */
export interface RemoteRuntimeOptions extends HostedOptions {
  /** The runtime API (default `http://localhost:8000`). */
  readonly apiUrl?: string
  /** Its key, sent as `X-API-Key` (default: the `SANDBOX_API_KEY` variable). */
  readonly apiKey?: Redacted.Redacted<string>
  /**
   * The runtime image the API runs (default `sandbox.runtimeContainerImage`). Without one, the API
   * builds it from `baseImage` and this package's server (`/build`), unless it already has it.
   */
  readonly image?: string
  /** The base of a runtime image the API builds (default `sandbox.baseContainerImage`). */
  readonly baseImage?: string
  /** The API's resource multiplier (1, 2, 4 or 8; default 1). */
  readonly resourceFactor?: 1 | 2 | 4 | 8
  /** The container runtime: `sysbox` (sent as `sysbox-runc`) or `gvisor` (the API's default, not sent). */
  readonly runtimeClass?: "sysbox" | "gvisor"
  /** With `sandbox.keepRuntimeAlive`: pause the runtime on release (default true). */
  readonly pauseClosedRuntimes?: boolean
  /** Each runtime-API request's budget (default 180 s). */
  readonly apiTimeout?: Duration.Input
  /** Re-send action-server requests that never reached it (default true). */
  readonly enableRetries?: boolean
  readonly schedules?: RemoteSchedules
}

const RemoteOptionsSchema = Schema.Struct({
  apiUrl: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^https?:\/\/[^/]/))),
  image: Schema.optionalKey(Schema.String.check(Schema.isNonEmpty())),
  baseImage: Schema.optionalKey(Schema.String.check(Schema.isNonEmpty())),
  resourceFactor: Schema.optionalKey(Schema.Literals([1, 2, 4, 8])),
  runtimeClass: Schema.optionalKey(Schema.Literals(["sysbox", "gvisor"]))
})

/** The remote runtime's own options checked, and the shared ones the runtime API decides refused. */
export const checkRemoteOptions = Effect.fn("RemoteRuntime.checkOptions")(function*(options: RemoteRuntimeOptions) {
  yield* decodeOptions(RemoteOptionsSchema, "RemoteRuntime options")(options)
  yield* unsupported(
    "RemoteRuntime",
    options,
    ["cpus", "memoryMiB", "pidsLimit"],
    "the runtime API sizes a runtime (resourceFactor)"
  )
  yield* unsupported(
    "RemoteRuntime",
    options,
    ["lifetime", "idleTimeout"],
    "the runtime API ends idle runtimes itself"
  )
  yield* unsupported(
    "RemoteRuntime",
    options,
    ["appPorts"],
    "the runtime API chooses the app ports (its work hosts, in info.urls)"
  )
})
