/**
 * OpenHands' `[sandbox]` configuration (spec §15.1), the fields a runtime reads, with its defaults, readable
 * from `SANDBOX_<UPPER_SNAKE_NAME>` environment variables as OpenHands does
 * (`SANDBOX_TIMEOUT=30`, `SANDBOX_VOLUMES=/a:/b:ro`, JSON for lists and maps).
 */
import { Config, ConfigProvider, Effect, Option, Schema } from "effect"
import { withDefault } from "./fields.ts"
import { formatIssue, namingBadFields } from "./issues.ts"

const NullableString = Schema.NullOr(Schema.String)
/** Seconds: a zero or negative timeout would fail every action (or wait forever), so it is refused up front. */
const Seconds = Schema.Number.check(Schema.isGreaterThan(0))

/** One entry of `volumes`: a host path or named volume (`volume:<name>` or a bare name), where, and how. */
export interface VolumeEntry {
  readonly host: string
  readonly named: boolean
  readonly container: string
  readonly mode: "ro" | "rw"
}

/**
 * The entries of a `volumes` string (`host:container[:ro|rw],...`), or undefined when one is not
 * of that form: the one parser for the schema's check and Docker's mounts, so they cannot disagree.
 */
export const volumeEntries = (spec: string): ReadonlyArray<VolumeEntry> | undefined => {
  const entries: Array<VolumeEntry> = []
  for (const entry of spec.split(",").map((text) => text.trim()).filter((text) => text !== "")) {
    const named = entry.startsWith("volume:")
    const [host = "", container = "", mode = "rw", ...rest] = entry.slice(named ? "volume:".length : 0).split(":")
    if (host === "" || container === "" || (mode !== "rw" && mode !== "ro") || rest.length > 0) return undefined
    entries.push({ host, named: named || !host.startsWith("/"), container, mode })
  }
  return entries
}

const isVolumesSpec = Schema.makeFilter<string>((spec) =>
  volumeEntries(spec) !== undefined || "Expected host:container[:ro|rw] entries separated by commas"
)
/**
 * The `[sandbox]` options some runtime reads, with OpenHands' defaults. Every field is implemented
 * wherever it applies (docs/runtimes/swapping.md says which runtime reads which); OpenHands' others
 * (remote runtime, platform, lint, VS Code port, ...) are left out rather than accepted and
 * silently ignored (docs/design-notes.md).
 */
export class SandboxConfig extends namingBadFields(
  Schema.Class<SandboxConfig>("SandboxConfig")({
    /** Docker: the container outlives its layer (attached to again by session id). */
    keepRuntimeAlive: withDefault(Schema.Boolean, false),
    /** Docker: the image the runtime image is built from. */
    baseContainerImage: withDefault(Schema.String, "nikolaik/python-nodejs:python3.12-nodejs22"),
    /** Docker: a ready runtime image, used as is (no build). */
    runtimeContainerImage: withDefault(NullableString, null),
    /** Every runtime: default hard timeout of an action, in seconds. */
    timeout: withDefault(Seconds, 120),
    /** Docker: the container on the host's network. */
    useHostNetwork: withDefault(Schema.Boolean, false),
    /** Docker: networks the container joins besides its own. */
    additionalNetworks: withDefault(Schema.Array(Schema.String), []),
    /** Docker: rebuild the runtime image even when one with its tag exists. */
    forceRebuildRuntime: withDefault(Schema.Boolean, false),
    /** Every runtime: variables the shells (and kernel, MCP servers, browser) start with; the `env` option wins. */
    runtimeStartupEnvVars: withDefault(Schema.Record(Schema.String, Schema.String), {}),
    /** Docker: GPUs for the container (all of them, or `cudaVisibleDevices`). */
    enableGpu: withDefault(Schema.Boolean, false),
    /** Docker: raw container create options, merged last. */
    dockerRuntimeKwargs: withDefault(Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)), null),
    /** Docker: `host:container[:ro|rw],...` mounts. */
    volumes: withDefault(Schema.NullOr(Schema.String.check(isVolumesSpec)), null),
    /** Docker: the GPUs given (and `CUDA_VISIBLE_DEVICES` in the container). */
    cudaVisibleDevices: withDefault(NullableString, null)
  })
) {}

/** How an environment variable's text becomes a field value. */
type EnvKind = "string" | "number" | "boolean" | "json"

const envKinds: { readonly [K in keyof typeof SandboxConfig.fields]: EnvKind } = {
  keepRuntimeAlive: "boolean",
  baseContainerImage: "string",
  runtimeContainerImage: "string",
  timeout: "number",
  useHostNetwork: "boolean",
  additionalNetworks: "json",
  forceRebuildRuntime: "boolean",
  runtimeStartupEnvVars: "json",
  enableGpu: "boolean",
  dockerRuntimeKwargs: "json",
  volumes: "string",
  cudaVisibleDevices: "string"
}

/** `remoteRuntimeApiUrl` → `SANDBOX_REMOTE_RUNTIME_API_URL`. */
export const sandboxEnvName = (field: string): string =>
  `SANDBOX_${field.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`

const readField = (field: string, kind: EnvKind): Config.Config<Option.Option<unknown>> => {
  const name = sandboxEnvName(field)
  switch (kind) {
    case "string":
      return Config.option(Config.String(name))
    case "number":
      return Config.option(Config.Number(name))
    case "boolean":
      return Config.option(Config.Boolean(name))
    case "json":
      return Config.option(Config.schema(Schema.fromJsonString(Schema.Unknown), name))
  }
}

/**
 * The sandbox configuration from `SANDBOX_*` variables of the current `ConfigProvider`
 * (the process environment by default); unset variables keep OpenHands' defaults.
 */
export const sandboxConfigFromEnv: Config.Config<SandboxConfig> = Config.all(
  Object.fromEntries(Object.entries(envKinds).map(([field, kind]) => [field, readField(field, kind)]))
).pipe(
  Config.mapEffect((values) => {
    const present = Object.fromEntries(
      Object.entries(values).flatMap(([k, v]) => Option.isSome(v) ? [[k, v.value]] : [])
    )
    // One line naming each bad variable (`SANDBOX_TIMEOUT: Expected a value greater than 0`).
    return Schema.decodeUnknownEffect(SandboxConfig)(present, { errors: "all" }).pipe(
      Effect.mapError((e) =>
        new Config.ConfigError(
          new ConfigProvider.SourceError({
            message: `Invalid SANDBOX_* variables: ${formatIssue(e.issue, sandboxEnvName)}`
          })
        )
      )
    )
  })
)

/** `given`, or the configuration from `SANDBOX_*` variables when a layer was given none. */
export const sandboxConfigOr = (given: SandboxConfig | undefined): Effect.Effect<SandboxConfig, Config.ConfigError> =>
  Effect.gen(function*() {
    return given ?? (yield* sandboxConfigFromEnv)
  })
