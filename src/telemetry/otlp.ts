/**
 * Export the spans and metrics every runtime reports (runtime/telemetry.ts) over
 * OTLP/HTTP, configured by the standard OpenTelemetry environment variables. The CLI and the
 * action server provide this layer at their edge; library users provide it once:
 * `program.pipe(Effect.provide(otlpLayerFromEnv({ serviceName: "my-agent" })))`.
 *
 * Why Effect's own exporters (`effect/observability`) and not `@effect/opentelemetry`: since
 * Effect 4 that package only bridges to the OpenTelemetry JS SDK (NodeSdk, a dozen peer
 * packages), while the OTLP/HTTP exporters live in `effect` itself and need only an HttpClient
 * (fetch). A user who already runs the OpenTelemetry SDK can provide `@effect/opentelemetry`'s
 * `NodeSdk.layer` instead: every span and metric here is a plain Effect one.
 *
 * Why the gate and the dynamic import: with no endpoint configured this layer is empty and
 * loads nothing (the exporters' modules cost a few hundred milliseconds of startup).
 */
import { Cause, Config, ConfigProvider, Effect, Layer, Option, Result, Schema } from "effect"
import { InvalidOptionsError } from "../schema/errors.ts"
import { formatIssue } from "../schema/issues.ts"

/** The `service.name` when neither `OTEL_SERVICE_NAME` nor `OTEL_RESOURCE_ATTRIBUTES` names one. */
export const DEFAULT_SERVICE_NAME = "effect-sandbox"

const optionalString = (name: string) => Config.option(Config.String(name))

/** Whether any OTLP endpoint is configured: the whole base, or the traces' or metrics' own. */
const endpointConfigured = Config.all([
  optionalString("OTEL_EXPORTER_OTLP_ENDPOINT"),
  optionalString("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
  optionalString("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
]).pipe(Config.map((endpoints) => endpoints.some(Option.isSome)))

/**
 * OTLP/HTTP's two encodings, from `OTEL_EXPORTER_OTLP_PROTOCOL` (default `http/protobuf`, as
 * the specification says). gRPC would need an HTTP/2 client and a protobuf service stub: refused.
 */
const protocol = Effect.fn("otlp.protocol")(function*() {
  const value = Option.getOrElse(yield* optionalString("OTEL_EXPORTER_OTLP_PROTOCOL"), () => "http/protobuf")
  if (value === "http/json" || value === "http/protobuf") return value
  return yield* new InvalidOptionsError({
    message:
      `OTEL_EXPORTER_OTLP_PROTOCOL=${value} is not supported: use http/protobuf or http/json (the collector's HTTP port, usually 4318).`
  })
})

/**
 * What the OpenTelemetry specification defaults but Effect's `layerFromConfig` requires
 * spelled out: the `otlp` exporter for traces and metrics, and a service name. Consulted only
 * after the user's own configuration, so `OTEL_TRACES_EXPORTER=none` still turns traces off.
 */
const specDefaults = Effect.fn("otlp.specDefaults")(function*(serviceName: string) {
  const resourceAttributes = Option.getOrElse(yield* optionalString("OTEL_RESOURCE_ATTRIBUTES"), () => "")
  // OTEL_SERVICE_NAME wins over OTEL_RESOURCE_ATTRIBUTES' service.name; our default over neither.
  const namesService = /(^|,)\s*service\.name\s*=/.test(resourceAttributes)
  return ConfigProvider.fromEnvRecord({
    OTEL_TRACES_EXPORTER: "otlp",
    OTEL_METRICS_EXPORTER: "otlp",
    OTEL_SERVICE_NAME: namesService ? undefined : serviceName
  })
})

/**
 * A malformed `OTEL_*` value (a bad URL, a non-numeric interval) is bad input like any other:
 * a one-line `InvalidOptionsError` naming the variable, never its value (a header's may be
 * credentials).
 */
const invalidSetting = (error: Config.ConfigError): InvalidOptionsError =>
  new InvalidOptionsError({
    message: `Invalid OpenTelemetry setting: ${
      Schema.isSchemaError(error.cause) ? formatIssue(error.cause.issue) : error.cause.message
    }`
  })

/** Effect's exporters die on a malformed setting (`Effect.orDie` in `layerFromConfig`): made typed again. */
const configDefectsAsErrors = <A>(layer: Layer.Layer<A>): Layer.Layer<never, InvalidOptionsError> =>
  Layer.catchCause(layer, (cause) => {
    const defect = Cause.findDefect(cause)
    return Result.isSuccess(defect) && defect.success instanceof Config.ConfigError
      ? Layer.effectDiscard(Effect.fail(invalidSetting(defect.success)))
      : Layer.effectDiscard(Effect.failCause(cause))
  })

/**
 * Spans and metrics over OTLP/HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` (or a traces/metrics
 * endpoint) is set, configured by the usual `OTEL_*` variables (`OTEL_SERVICE_NAME`,
 * `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_PROTOCOL`, `OTEL_SDK_DISABLED`, export
 * intervals and timeouts); nothing at all otherwise. Releasing the layer flushes what is left.
 * Logs are not exported (the runtimes log nothing).
 */
export const otlpLayerFromEnv = (options?: { readonly serviceName?: string | undefined }) =>
  Layer.unwrap(
    Effect.gen(function*() {
      if (!(yield* endpointConfigured)) return Layer.empty
      const serialization = yield* protocol()
      const defaults = yield* specDefaults(options?.serviceName ?? DEFAULT_SERVICE_NAME)
      const [OtlpMetrics, OtlpTracer, OtlpSerialization, FetchHttpClient] = yield* Effect.promise(() =>
        Promise.all([
          import("effect/observability/OtlpMetrics"),
          import("effect/observability/OtlpTracer"),
          import("effect/observability/OtlpSerialization"),
          import("effect/http/FetchHttpClient")
        ])
      )
      return Layer.mergeAll(OtlpTracer.layerFromConfig(), OtlpMetrics.layerFromConfig()).pipe(
        Layer.provide(
          serialization === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf
        ),
        Layer.provide(FetchHttpClient.layer),
        Layer.provide(ConfigProvider.layerAdd(defaults)),
        configDefectsAsErrors
      )
    }).pipe(Effect.catchTag("ConfigError", (error) => Effect.fail(invalidSetting(error))))
  )
