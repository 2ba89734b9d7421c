/**
 * The Runloop API client of one layer or pool. `@runloop/api-client` is an optional peer
 * dependency, imported when the layer is built (never by `effect-sandbox` or by importing
 * `effect-sandbox/runloop`): a missing one is a `RuntimeStartError` saying what to install.
 *
 * The API key is `Redacted` until the SDK gets it: the `apiKey` option, else `RUNLOOP_API_KEY`
 * read through Effect `Config`; the endpoint is `baseUrl`, else `RUNLOOP_BASE_URL`, else Runloop's
 * cloud. The client's own retries are off (`maxRetries: 0`): the Stainless client would retry a
 * 429 up to five times on its own schedule, and our `rateLimitRetry` (errors.ts) on top of it
 * would multiply them silently; with ours the only one, a 429 is retried a known number of times.
 * Its HTTP/2 transport (the SDK's default on Node since 1.20.2) is kept.
 */
import type { Runloop } from "@runloop/api-client"
import { Config, Effect, Option, Redacted } from "effect"
import { InvalidOptionsError, RuntimeStartError } from "../../schema/errors.ts"

/** Where the client connects and with what key (the layer's options). */
export interface RunloopConnection {
  readonly apiKey?: Redacted.Redacted<string> | undefined
  readonly baseUrl?: string | undefined
}

/** Runloop's cloud API, the SDK's own default. */
export const DEFAULT_BASE_URL = "https://api.runloop.ai"

const loadSdk = Effect.tryPromise({
  try: () => import("@runloop/api-client"),
  catch: (cause) =>
    new RuntimeStartError({
      message: (cause as { code?: string }).code === "ERR_MODULE_NOT_FOUND"
        ? "RunloopRuntime needs @runloop/api-client, an optional peer dependency: npm install @runloop/api-client"
        : `Cannot load @runloop/api-client: ${(cause as Error).message}`
    })
})

/** A client with its base URL (the tunnel URLs' domain is derived from it). */
export interface RunloopClient {
  readonly api: Runloop
  readonly baseUrl: string
}

/** The client; no API key given or set is an `InvalidOptionsError` saying where to put one. */
export const runloopClient = Effect.fn("runloopClient")(function*(connection: RunloopConnection) {
  const apiKey = connection.apiKey ?? Option.getOrUndefined(yield* Config.option(Config.Redacted("RUNLOOP_API_KEY")))
  if (apiKey === undefined) {
    return yield* new InvalidOptionsError({
      message: "RunloopRuntime options: no apiKey given and RUNLOOP_API_KEY is not set (a Runloop API key, ak_...)."
    })
  }
  const baseUrl = (connection.baseUrl ??
    Option.getOrElse(yield* Config.option(Config.String("RUNLOOP_BASE_URL")), () => DEFAULT_BASE_URL))
    .replace(/\/+$/, "")
  const sdk = yield* loadSdk
  const api = new sdk.Runloop({ bearerToken: Redacted.value(apiKey), baseURL: baseUrl, maxRetries: 0 })
  return { api, baseUrl } satisfies RunloopClient
})
