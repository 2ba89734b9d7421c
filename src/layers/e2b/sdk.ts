/**
 * The `e2b` SDK as E2BRuntime uses it: loaded when a layer is built (an optional peer dependency,
 * never loaded by the root entry), every call an Effect whose failure is an `E2BError` carrying
 * E2B's own text, and rate-limited calls (HTTP 429) retried by one named schedule. The SDK's own
 * 429 retry is turned off (`retries: 0`) so that schedule is the only one.
 */
import type { ConnectionOpts, Sandbox } from "e2b"
import { Effect, Redacted, type Schedule } from "effect"
import { RuntimeStartError } from "../../schema/errors.ts"
import { E2B_RATE_LIMIT_RETRY } from "./rateLimit.ts"

/** What E2BRuntime takes from the SDK module. */
export interface E2BSdk {
  readonly Sandbox: typeof Sandbox
}

/** Where the SDK goes and with what key: its own connection options (`E2B_DOMAIN`, `E2B_API_URL`, ... when absent). */
export interface E2BConnection {
  readonly apiKey: Redacted.Redacted<string>
  readonly domain?: string | undefined
  readonly apiUrl?: string | undefined
  readonly sandboxUrl?: string | undefined
  readonly requestTimeoutMs?: number | undefined
}

/** The SDK's options for a connection. */
export const sdkOptions = (connection: E2BConnection): ConnectionOpts => ({
  apiKey: Redacted.value(connection.apiKey),
  retries: 0,
  ...(connection.domain === undefined ? {} : { domain: connection.domain }),
  ...(connection.apiUrl === undefined ? {} : { apiUrl: connection.apiUrl }),
  ...(connection.sandboxUrl === undefined ? {} : { sandboxUrl: connection.sandboxUrl }),
  ...(connection.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: connection.requestTimeoutMs })
})

/** What kind of refusal E2B answered with: the ones a caller acts on differently. */
export type E2BErrorKind = "unauthorized" | "rate-limited" | "not-found" | "other"

/** A failed SDK call: what we were doing, E2B's text, and its kind. */
export class E2BError extends Error {
  readonly kind: E2BErrorKind
  constructor(what: string, kind: E2BErrorKind, text: string) {
    super(`E2B could not ${what}: ${text}`)
    this.kind = kind
  }
}

const kindOf = (error: unknown): E2BErrorKind => {
  const name = (error as { name?: string } | null)?.name
  return name === "AuthenticationError"
    ? "unauthorized"
    : name === "RateLimitError"
    ? "rate-limited"
    : name === "SandboxNotFoundError" || name === "NotFoundError"
    ? "not-found"
    : "other"
}

/** One SDK call as an Effect: `E2BError` on failure, 429s retried by `retry` (default `E2B_RATE_LIMIT_RETRY`). */
export const e2bCall = <A>(
  what: string,
  call: () => Promise<A>,
  retry: Schedule.Schedule<unknown> = E2B_RATE_LIMIT_RETRY
): Effect.Effect<A, E2BError> =>
  Effect.tryPromise({
    try: call,
    catch: (error) => new E2BError(what, kindOf(error), error instanceof Error ? error.message : String(error))
  }).pipe(
    Effect.retry({ schedule: retry, while: (error) => error.kind === "rate-limited" })
  )

/** The SDK module, or a RuntimeStartError saying to install it. */
export const loadE2B: Effect.Effect<E2BSdk, RuntimeStartError> = Effect.tryPromise({
  try: () => import("e2b").then((sdk): E2BSdk => ({ Sandbox: sdk.Sandbox })),
  catch: (cause) =>
    new RuntimeStartError({
      message: (cause as { code?: string }).code === "ERR_MODULE_NOT_FOUND"
        ? "E2BRuntime needs e2b, an optional peer dependency: npm install e2b"
        : `Cannot load e2b: ${(cause as Error).message}`
    })
})

export type E2BSandbox = Sandbox
