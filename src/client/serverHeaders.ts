/** Headers a provider's proxy asks for on every request to the server. `ActionClient.ts` re-exports it. */
import { Effect, Redacted } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { redactingHeaders } from "../telemetry/secretHeaders.ts"
import { inheritDefault } from "./leanClient.ts"

/**
 * Run `effect` with an HTTP client that adds `headers` to every request: what a provider's proxy
 * in front of the server asks for (Daytona's preview token), on the `/alive` wait, the start-up
 * requests and every action alike. Values stay `Redacted` until the request is made, and spans
 * that record headers write them as `<redacted>` (telemetry/secretHeaders.ts).
 */
export const withServerHeaders =
  (headers: Readonly<Record<string, Redacted.Redacted<string>>> | undefined) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | HttpClient.HttpClient> =>
    headers === undefined ? effect : Effect.updateService(
      effect,
      HttpClient.HttpClient,
      (client) =>
        inheritDefault(
          client,
          client.pipe(
            HttpClient.mapRequest(
              HttpClientRequest.setHeaders(
                Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, Redacted.value(v)]))
              )
            ),
            redactingHeaders(Object.keys(headers))
          )
        )
    )
