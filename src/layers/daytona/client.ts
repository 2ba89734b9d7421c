/**
 * The Daytona SDK client of one layer or pool. `@daytonaio/sdk` is an optional peer dependency,
 * imported when the layer is built (never by `effect-sandbox` or by importing
 * `effect-sandbox/daytona`): a missing one is a `RuntimeStartError` saying what to install.
 *
 * The API key is `Redacted` until the SDK gets it: the `apiKey` option, else `DAYTONA_API_KEY`
 * read through Effect `Config`; the endpoint is `apiUrl`, else `DAYTONA_API_URL`, else Daytona's
 * cloud, and `target` (the region) `DAYTONA_TARGET`, as the SDK itself reads them. We always pass
 * all three, so the SDK never falls back to reading a `.env` file of the working directory.
 */
import type { Daytona } from "@daytonaio/sdk"
import { Config, Effect, Option, Redacted } from "effect"
import { RuntimeStartError } from "../../schema/errors.ts"
import { daytonaStartError } from "./errors.ts"

/** Where the client connects and with what key (the layer's options). */
export interface DaytonaConnection {
  readonly apiKey?: Redacted.Redacted<string> | undefined
  readonly apiUrl?: string | undefined
  readonly target?: string | undefined
}

/** Daytona's cloud API, the SDK's own default. */
export const DEFAULT_API_URL = "https://app.daytona.io/api"

const loadSdk = Effect.tryPromise({
  try: () => import("@daytonaio/sdk"),
  catch: (cause) =>
    new RuntimeStartError({
      message: (cause as { code?: string }).code === "ERR_MODULE_NOT_FOUND"
        ? "DaytonaRuntime needs @daytonaio/sdk, an optional peer dependency: npm install @daytonaio/sdk"
        : `Cannot load @daytonaio/sdk: ${(cause as Error).message}`
    })
})

const optional = (name: string) => Config.option(Config.String(name))

/**
 * A Daytona client in the current scope (its event connection closed with the scope). Fails
 * with a `RuntimeStartError` when no API key is given or set.
 */
export const daytonaClient = Effect.fn("daytonaClient")(function*(connection: DaytonaConnection) {
  const sdk = yield* loadSdk
  const apiKey = connection.apiKey ?? Option.getOrUndefined(yield* Config.option(Config.Redacted("DAYTONA_API_KEY")))
  if (apiKey === undefined) {
    return yield* new RuntimeStartError({
      message: "DaytonaRuntime needs an API key: set DAYTONA_API_KEY or pass the `apiKey` option (Redacted)."
    })
  }
  const apiUrl = connection.apiUrl ?? Option.getOrElse(yield* optional("DAYTONA_API_URL"), () => DEFAULT_API_URL)
  const target = connection.target ?? Option.getOrUndefined(yield* optional("DAYTONA_TARGET"))
  return yield* Effect.acquireRelease(
    Effect.try({
      try: (): Daytona =>
        new sdk.Daytona({ apiKey: Redacted.value(apiKey), apiUrl, ...(target === undefined ? {} : { target }) }),
      catch: daytonaStartError(`connect to ${apiUrl}`)
    }),
    (client) => Effect.promise(() => client[Symbol.asyncDispose]())
  )
})
