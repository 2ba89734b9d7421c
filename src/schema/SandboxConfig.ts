/**
 * OpenHands' `[sandbox]` configuration (spec §15.1) with its defaults, readable
 * from `SANDBOX_<UPPER_SNAKE_NAME>` environment variables as OpenHands does
 * (`SANDBOX_TIMEOUT=30`, `SANDBOX_VOLUMES=/a:/b:ro`, JSON for lists and maps).
 */
import { Config, ConfigProvider, Effect, Option, Schema } from "effect"
import { withDefault } from "./fields.ts"
import { formatIssue } from "./issues.ts"

const NullableString = Schema.NullOr(Schema.String)
/** Seconds: a zero or negative timeout would fail every action (or wait forever), so it is refused up front. */
const Seconds = Schema.Number.check(Schema.isGreaterThan(0))
const NonNegativeSeconds = Schema.Number.check(Schema.isGreaterThanOrEqualTo(0))

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
const defaultUserId = typeof process.getuid === "function" ? process.getuid() : 1000

export class SandboxConfig extends Schema.Class<SandboxConfig>("SandboxConfig")({
  remoteRuntimeApiUrl: withDefault(Schema.String, "http://localhost:8000"),
  localRuntimeUrl: withDefault(Schema.String, "http://localhost"),
  keepRuntimeAlive: withDefault(Schema.Boolean, false),
  pauseClosedRuntimes: withDefault(Schema.Boolean, true),
  rmAllContainers: withDefault(Schema.Boolean, false),
  /** Never printed: `Redacted` shows as `<redacted>` in logs and JSON. */
  apiKey: withDefault(Schema.NullOr(Schema.Redacted(Schema.String)), null),
  baseContainerImage: withDefault(Schema.String, "nikolaik/python-nodejs:python3.12-nodejs22"),
  runtimeContainerImage: withDefault(NullableString, null),
  userId: withDefault(Schema.Int, defaultUserId),
  /** Default hard timeout of an action, in seconds. */
  timeout: withDefault(Seconds, 120),
  remoteRuntimeInitTimeout: withDefault(Seconds, 180),
  remoteRuntimeApiTimeout: withDefault(Seconds, 180),
  remoteRuntimeEnableRetries: withDefault(Schema.Boolean, true),
  remoteRuntimeClass: withDefault(NullableString, null),
  enableAutoLint: withDefault(Schema.Boolean, false),
  useHostNetwork: withDefault(Schema.Boolean, false),
  additionalNetworks: withDefault(Schema.Array(Schema.String), []),
  runtimeBindingAddress: withDefault(Schema.String, "0.0.0.0"),
  runtimeExtraBuildArgs: withDefault(Schema.NullOr(Schema.Array(Schema.String)), null),
  initializePlugins: withDefault(Schema.Boolean, true),
  forceRebuildRuntime: withDefault(Schema.Boolean, false),
  runtimeExtraDeps: withDefault(NullableString, null),
  runtimeStartupEnvVars: withDefault(Schema.Record(Schema.String, Schema.String), {}),
  browsergymEvalEnv: withDefault(NullableString, null),
  platform: withDefault(NullableString, null),
  closeDelay: withDefault(NonNegativeSeconds, 3600),
  remoteRuntimeResourceFactor: withDefault(Schema.Number.check(Schema.isGreaterThan(0)), 1),
  enableGpu: withDefault(Schema.Boolean, false),
  dockerRuntimeKwargs: withDefault(Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)), null),
  selectedRepo: withDefault(NullableString, null),
  trustedDirs: withDefault(Schema.Array(Schema.String), []),
  vscodePort: withDefault(Schema.NullOr(Schema.Int), null),
  /** `host:container[:ro|rw],...` */
  volumes: withDefault(Schema.NullOr(Schema.String.check(isVolumesSpec)), null),
  cudaVisibleDevices: withDefault(NullableString, null)
}) {}

/** How an environment variable's text becomes a field value. */
type EnvKind = "string" | "number" | "boolean" | "json" | "redacted"

const envKinds: { readonly [K in keyof typeof SandboxConfig.fields]: EnvKind } = {
  remoteRuntimeApiUrl: "string",
  localRuntimeUrl: "string",
  keepRuntimeAlive: "boolean",
  pauseClosedRuntimes: "boolean",
  rmAllContainers: "boolean",
  apiKey: "redacted",
  baseContainerImage: "string",
  runtimeContainerImage: "string",
  userId: "number",
  timeout: "number",
  remoteRuntimeInitTimeout: "number",
  remoteRuntimeApiTimeout: "number",
  remoteRuntimeEnableRetries: "boolean",
  remoteRuntimeClass: "string",
  enableAutoLint: "boolean",
  useHostNetwork: "boolean",
  additionalNetworks: "json",
  runtimeBindingAddress: "string",
  runtimeExtraBuildArgs: "json",
  initializePlugins: "boolean",
  forceRebuildRuntime: "boolean",
  runtimeExtraDeps: "string",
  runtimeStartupEnvVars: "json",
  browsergymEvalEnv: "string",
  platform: "string",
  closeDelay: "number",
  remoteRuntimeResourceFactor: "number",
  enableGpu: "boolean",
  dockerRuntimeKwargs: "json",
  selectedRepo: "string",
  trustedDirs: "json",
  vscodePort: "number",
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
    case "redacted":
      return Config.option(Config.Redacted(name))
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
