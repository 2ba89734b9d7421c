/**
 * The runtime API's client (spec §14): every call sends `X-API-Key`, has `apiTimeout` per attempt,
 * and is sent again on 429 or a lost connection by the `api` schedule. Answers are decoded with
 * the fields OpenHands reads; anything else (a refusal, a body without them) is an `ApiFailure`
 * naming the call, which the caller turns into its own typed error.
 */
import { Duration, Effect, Redacted, type Schedule, Schema } from "effect"
import { HttpClient, type HttpClientError, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { formatIssue } from "../../schema/issues.ts"

/** `GET /sessions/{sid}`: a session's runtime, when it has one. */
export const SessionAnswer = Schema.Struct({
  status: Schema.String,
  runtime_id: Schema.optionalKey(Schema.String),
  url: Schema.optionalKey(Schema.String),
  work_hosts: Schema.optionalKey(Schema.Record(Schema.String, Schema.Number)),
  session_api_key: Schema.optionalKey(Schema.NullOr(Schema.String))
})

/** `POST /start`: the runtime started for the session. */
export const StartAnswer = Schema.Struct({
  runtime_id: Schema.String,
  url: Schema.String,
  work_hosts: Schema.optionalKey(Schema.Record(Schema.String, Schema.Number)),
  session_api_key: Schema.optionalKey(Schema.NullOr(Schema.String))
})

/** `GET /runtime/{id}`: the runtime's pod. */
export const RuntimeAnswer = Schema.Struct({
  runtime_id: Schema.String,
  pod_status: Schema.String,
  restart_count: Schema.optionalKey(Schema.Number),
  restart_reasons: Schema.optionalKey(Schema.Array(Schema.String))
})

/** `GET /registry_prefix`: where the API's builder pushes images. */
export const RegistryPrefixAnswer = Schema.Struct({ registry_prefix: Schema.String })

/** `GET /image_exists`: whether the API can run an image. */
export const ImageExistsAnswer = Schema.Struct({ exists: Schema.Boolean })

/** `POST /build`: the build started. */
export const BuildAnswer = Schema.Struct({ build_id: Schema.String })

/** `GET /build_status`: a build's state, its image once done, its error once failed. */
export const BuildStatusAnswer = Schema.Struct({
  status: Schema.String,
  image: Schema.optionalKey(Schema.String),
  error: Schema.optionalKey(Schema.NullOr(Schema.String))
})

/** A runtime-API call that did not give the answer asked for; `status` when the API answered. */
export class ApiFailure {
  readonly _tag = "ApiFailure"
  readonly message: string
  readonly status: number | undefined
  constructor(message: string, status?: number) {
    this.message = message
    this.status = status
  }
}

/** Sent again by the `api` schedule: 429, or the request was lost on the way. */
class Resend {
  readonly _tag = "Resend"
  readonly cause: string
  constructor(cause: string) {
    this.cause = cause
  }
}

export interface RuntimeApiOptions {
  readonly apiUrl: string
  readonly apiKey: Redacted.Redacted<string>
  readonly timeout: Duration.Duration
  readonly retry: Schedule.Schedule<unknown>
  /** `POST /build` answered 429 (the builder is busy): sent again by this schedule. */
  readonly buildRetry: Schedule.Schedule<unknown>
}

/** The `detail` of a JSON error body, or the body itself. */
const detailText = (text: string): string => {
  try {
    const json = JSON.parse(text)
    return typeof json?.detail === "string" ? json.detail : text
  } catch {
    return text
  }
}

export const makeRuntimeApi = Effect.fn("RemoteRuntime.makeRuntimeApi")(function*(options: RuntimeApiOptions) {
  const apiUrl = options.apiUrl.replace(/\/+$/, "")
  const client = (yield* HttpClient.HttpClient).pipe(
    HttpClient.mapRequest((request) =>
      HttpClientRequest.prependUrl(request, apiUrl).pipe(
        HttpClientRequest.setHeader("X-API-Key", Redacted.value(options.apiKey))
      )
    )
  )

  /** One attempt: 429, a lost connection and a timed-out attempt are worth sending again. */
  const attempt = (what: string, request: HttpClientRequest.HttpClientRequest) =>
    client.execute(request).pipe(
      Effect.catch((error: HttpClientError.HttpClientError) =>
        Effect.fail(
          error.reason._tag === "TransportError"
            ? new Resend(error.message)
            : new ApiFailure(`${what}: ${error.message}`)
        )
      ),
      Effect.timeoutOrElse({
        duration: options.timeout,
        orElse: () => Effect.fail(new Resend(`no answer within ${Duration.format(options.timeout)}`))
      }),
      Effect.flatMap((response) =>
        response.status === 429 ? Effect.fail(new Resend("HTTP 429 (too many requests)")) : Effect.succeed(response)
      )
    )

  /** The call's answer, any status, after the schedule's re-sends. */
  const answer = (
    what: string,
    request: HttpClientRequest.HttpClientRequest,
    schedule: Schedule.Schedule<unknown> = options.retry
  ) =>
    attempt(what, request).pipe(
      Effect.retry({ schedule, while: (e) => e instanceof Resend }),
      Effect.catch((e): Effect.Effect<never, ApiFailure> =>
        Effect.fail(
          e instanceof Resend ? new ApiFailure(`The runtime API at ${apiUrl} did not answer ${what}: ${e.cause}`) : e
        )
      )
    )

  const refusal = (what: string, response: HttpClientResponse.HttpClientResponse) =>
    response.text.pipe(
      Effect.orElseSucceed(() => ""),
      Effect.flatMap((text) =>
        Effect.fail(
          new ApiFailure(
            `The runtime API at ${apiUrl} refused ${what}: HTTP ${response.status} ${detailText(text)}`,
            response.status
          )
        )
      )
    )

  /** `response`, when 2xx, decoded as `schema`. */
  const decoded = <S extends Schema.Top & { readonly DecodingServices: never }>(
    what: string,
    response: HttpClientResponse.HttpClientResponse,
    schema: S
  ): Effect.Effect<S["Type"], ApiFailure> =>
    response.status >= 300 ? refusal(what, response) : response.json.pipe(
      Effect.flatMap(Schema.decodeUnknownEffect(schema)),
      Effect.mapError((e) =>
        new ApiFailure(
          `The runtime API at ${apiUrl} answered ${what} with an unexpected body: ${
            e._tag === "SchemaError" ? formatIssue(e.issue) : e.message
          }`
        )
      )
    )

  /** A call whose 2xx answer is decoded as `schema`. */
  const call = <S extends Schema.Top & { readonly DecodingServices: never }>(
    what: string,
    request: HttpClientRequest.HttpClientRequest,
    schema: S
  ): Effect.Effect<S["Type"], ApiFailure> =>
    answer(what, request).pipe(Effect.flatMap((response) => decoded(what, response, schema)))

  /** A call whose body OpenHands ignores: any 2xx. */
  const post = (path: string, body: unknown) =>
    answer(`POST ${path}`, HttpClientRequest.post(path).pipe(HttpClientRequest.bodyJsonUnsafe(body))).pipe(
      Effect.flatMap((response) => response.status >= 300 ? refusal(`POST ${path}`, response) : Effect.void)
    )

  return {
    apiUrl,
    /** The session's runtime, or undefined when the API has none (404). */
    session: (sessionId: string) => {
      const what = `GET /sessions/${sessionId}`
      return answer(what, HttpClientRequest.get(`/sessions/${encodeURIComponent(sessionId)}`)).pipe(
        Effect.flatMap((response) =>
          response.status === 404 ? Effect.succeed(undefined) : decoded(what, response, SessionAnswer)
        )
      )
    },
    start: (body: StartRequest) =>
      call("POST /start", HttpClientRequest.post("/start").pipe(HttpClientRequest.bodyJsonUnsafe(body)), StartAnswer),
    runtime: (runtimeId: string) =>
      call(
        `GET /runtime/${runtimeId}`,
        HttpClientRequest.get(`/runtime/${encodeURIComponent(runtimeId)}`),
        RuntimeAnswer
      ),
    registryPrefix: call("GET /registry_prefix", HttpClientRequest.get("/registry_prefix"), RegistryPrefixAnswer),
    imageExists: (image: string) =>
      call(
        "GET /image_exists",
        HttpClientRequest.get("/image_exists").pipe(HttpClientRequest.setUrlParams({ image })),
        ImageExistsAnswer
      ),
    /** `form`: `context` (context.tar.gz, base64), `target_image`, repeated `tags`. */
    build: (form: FormData) =>
      answer(
        "POST /build",
        HttpClientRequest.post("/build").pipe(HttpClientRequest.bodyFormData(form)),
        options.buildRetry
      )
        .pipe(Effect.flatMap((response) => decoded("POST /build", response, BuildAnswer))),
    buildStatus: (buildId: string) =>
      call(
        "GET /build_status",
        HttpClientRequest.get("/build_status").pipe(HttpClientRequest.setUrlParams({ build_id: buildId })),
        BuildStatusAnswer
      ),
    pause: (runtimeId: string) => post("/pause", { runtime_id: runtimeId }),
    resume: (runtimeId: string) => post("/resume", { runtime_id: runtimeId }),
    stop: (runtimeId: string) => post("/stop", { runtime_id: runtimeId })
  }
})

/** The runtime API's client, as `makeRuntimeApi` makes it. */
export type RuntimeApi = Effect.Success<ReturnType<typeof makeRuntimeApi>>

/** `POST /start`'s body (spec §14). */
export interface StartRequest {
  readonly image: string
  readonly command: ReadonlyArray<string>
  readonly working_dir: string
  readonly environment: Readonly<Record<string, string>>
  readonly session_id: string
  readonly resource_factor: number
  readonly runtime_class?: string
}
