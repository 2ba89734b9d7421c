/**
 * The runtime API's client (spec §14): every call sends `X-API-Key` with `apiTimeout` to answer,
 * goes through the hosted runtime's `ProviderCall` (classified by classify.ts, so a 429 or a lost
 * connection is waited out under the one `providerRetry` schedule), and is decoded with the fields
 * OpenHands reads. A refusal, a silence or a body without those fields is an `ApiFailure` naming
 * the call, which the classifier reads.
 */
import { Duration, Effect, Redacted, Schema } from "effect"
import type { ProviderError } from "../../schema/errors.ts"
import { formatIssue } from "../../schema/issues.ts"
import { retryAfterHeader } from "../../schema/waitOut.ts"
import type { ProviderCall } from "../../services/Driver.ts"

/** `GET /sessions/{sid}`: a session's runtime, when it has one. */
const SessionAnswer = Schema.Struct({
  status: Schema.String,
  runtime_id: Schema.optionalKey(Schema.String),
  url: Schema.optionalKey(Schema.String),
  work_hosts: Schema.optionalKey(Schema.Record(Schema.String, Schema.Number)),
  session_api_key: Schema.optionalKey(Schema.NullOr(Schema.String))
})

/** `POST /start`: the runtime started for the session. */
const StartAnswer = Schema.Struct({
  runtime_id: Schema.String,
  url: Schema.String,
  work_hosts: Schema.optionalKey(Schema.Record(Schema.String, Schema.Number)),
  session_api_key: Schema.optionalKey(Schema.NullOr(Schema.String))
})

/**
 * `GET /runtime/{id}`: the runtime's pod, why it restarted or failed (free text, the API's own
 * words), and, from our runtime API, the server's last output once it exited (`last_output`, an
 * extension beside §14's fields: OpenHands' client ignores it).
 */
const RuntimeAnswer = Schema.Struct({
  runtime_id: Schema.String,
  pod_status: Schema.String,
  restart_reasons: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String))),
  last_output: Schema.optionalKey(Schema.NullOr(Schema.String))
})

const RegistryPrefixAnswer = Schema.Struct({ registry_prefix: Schema.String })
const ImageExistsAnswer = Schema.Struct({ exists: Schema.Boolean })
const BuildAnswer = Schema.Struct({ build_id: Schema.String })

/** `GET /build_status`: a build's state, its image once done, its error once failed. */
const BuildStatusAnswer = Schema.Struct({
  status: Schema.String,
  image: Schema.optionalKey(Schema.String),
  error: Schema.optionalKey(Schema.NullOr(Schema.String))
})

/** How a runtime-API call failed: no answer, a refusal (its status), or a body without OpenHands' fields. */
export interface ApiOutcome {
  readonly silent?: boolean
  readonly status?: number | undefined
  /** The API's `Retry-After`. */
  readonly retryAfter?: Duration.Duration | undefined
}

/** A runtime-API call that did not give the answer asked for. */
export class ApiFailure extends Error {
  readonly outcome: ApiOutcome
  constructor(message: string, outcome: ApiOutcome) {
    super(message)
    this.name = "ApiFailure"
    this.outcome = outcome
  }
}

export interface RuntimeApiOptions {
  readonly apiUrl: string
  readonly apiKey: Redacted.Redacted<string>
  /** Each request's budget. */
  readonly timeout: Duration.Duration
  readonly call: ProviderCall
}

/** The `detail` of a JSON error body, or the body itself; the status's own words when it says nothing. */
const detailText = (text: string, statusText: string): string => {
  if (text.trim() === "" || text.trim() === "{}") return `(${statusText.toLowerCase()})`
  try {
    const json = JSON.parse(text)
    return typeof json?.detail === "string" ? json.detail : text
  } catch {
    return text
  }
}

/** Why a request got no answer, in a few words. */
const silence = (cause: unknown, timeout: Duration.Duration): string => {
  if ((cause as { name?: string }).name === "TimeoutError") return `no answer within ${Duration.format(timeout)}`
  const inner = (cause as { cause?: { code?: string; message?: string } }).cause
  return inner?.code ?? inner?.message ?? (cause instanceof Error ? cause.message : String(cause))
}

/** A JSON `POST` body. */
const post = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body)
})

export const makeRuntimeApi = (options: RuntimeApiOptions) => {
  const apiUrl = options.apiUrl.replace(/\/+$/, "")

  /** One request, its answer when 2xx; an `ApiFailure` otherwise. */
  const send = async (what: string, path: string, init: RequestInit = {}): Promise<Response> => {
    let response: Response
    try {
      response = await fetch(`${apiUrl}${path}`, {
        ...init,
        headers: { ...init.headers as Record<string, string>, "X-API-Key": Redacted.value(options.apiKey) },
        signal: AbortSignal.timeout(Duration.toMillis(options.timeout))
      })
    } catch (cause) {
      throw new ApiFailure(`The runtime API at ${apiUrl} did not answer ${what}: ${silence(cause, options.timeout)}`, {
        silent: true
      })
    }
    if (response.status < 300) return response
    const retryAfter = retryAfterHeader(response.headers.get("retry-after"))
    throw new ApiFailure(
      `The runtime API at ${apiUrl} refused ${what}: HTTP ${response.status} ${
        detailText(await response.text().catch(() => ""), response.statusText)
      }`,
      { status: response.status, retryAfter }
    )
  }

  /** The answer's body as `schema`, or an `ApiFailure` saying what it lacks. */
  const decode = async <A>(what: string, schema: Schema.Decoder<A>, response: Response): Promise<A> => {
    try {
      return Schema.decodeUnknownSync(schema)(await response.json())
    } catch (error) {
      const why = error instanceof Schema.SchemaError ? formatIssue(error.issue) : String(error)
      throw new ApiFailure(`The runtime API at ${apiUrl} answered ${what} with an unexpected body: ${why}`, {})
    }
  }

  /**
   * A call whose 2xx answer is decoded as `schema`: `operation` names it in the provider's error,
   * `what` (`GET /image_exists`) in the API's text; `query` is sent after the path.
   */
  const json = <A>(
    operation: string,
    what: string,
    schema: Schema.Decoder<A>,
    init: RequestInit & { readonly query?: Record<string, string> } = {}
  ): Effect.Effect<A, ProviderError> =>
    options.call(operation, async () => {
      const { query, ...request } = init
      const path = `${what.slice(what.indexOf(" ") + 1)}${query === undefined ? "" : `?${new URLSearchParams(query)}`}`
      return decode(what, schema, await send(what, path, request))
    })

  /** A lifecycle call whose body OpenHands ignores: any 2xx. */
  const lifecycle = (verb: "pause" | "resume" | "stop", runtimeId: string) =>
    options.call(
      `${verb} runtime ${runtimeId}`,
      // The answer's body is let go unread: OpenHands reads none of it.
      () =>
        send(`POST /${verb}`, `/${verb}`, post({ runtime_id: runtimeId })).then((response) => response.body?.cancel())
    ).pipe(Effect.asVoid)

  return {
    apiUrl,
    /** The session's runtime, or undefined when the API has none (404). */
    session: (sessionId: string) =>
      json(`look up session ${sessionId}`, `GET /sessions/${encodeURIComponent(sessionId)}`, SessionAnswer).pipe(
        Effect.map((answer): typeof SessionAnswer.Type | undefined => answer),
        Effect.catchIf((error) => error.status === 404, () => Effect.succeed(undefined))
      ),
    start: (body: StartRequest) => json("start a runtime", "POST /start", StartAnswer, post(body)),
    runtime: (runtimeId: string) =>
      json(`look up runtime ${runtimeId}`, `GET /runtime/${encodeURIComponent(runtimeId)}`, RuntimeAnswer),
    registryPrefix: json("read the registry prefix", "GET /registry_prefix", RegistryPrefixAnswer),
    imageExists: (image: string) =>
      json(`look up image ${image}`, "GET /image_exists", ImageExistsAnswer, { query: { image } }),
    /** `form`: `context` (context.tar.gz, base64), `target_image`. */
    build: (form: FormData) =>
      json("build the runtime image", "POST /build", BuildAnswer, { method: "POST", body: form }),
    buildStatus: (buildId: string) =>
      json(`follow build ${buildId}`, "GET /build_status", BuildStatusAnswer, { query: { build_id: buildId } }),
    pause: (runtimeId: string) => lifecycle("pause", runtimeId),
    resume: (runtimeId: string) => lifecycle("resume", runtimeId),
    stop: (runtimeId: string) => lifecycle("stop", runtimeId)
  }
}

/** The runtime API's client, as `makeRuntimeApi` makes it. */
export type RuntimeApi = ReturnType<typeof makeRuntimeApi>

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
