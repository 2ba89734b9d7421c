/**
 * The `modal` SDK as ModalRuntime uses it: loaded when a layer is built (an optional peer
 * dependency, never loaded by the root entry), one client per layer, and every call an Effect
 * whose failure is a `ModalError` carrying Modal's own text (the gRPC status details), with
 * rate-limited calls (RESOURCE_EXHAUSTED) retried by one named schedule.
 */
import { Effect, Redacted, type Schedule } from "effect"
import type { ModalClient } from "modal"
import { RuntimeStartError } from "../../schema/errors.ts"
import { MODAL_RATE_LIMIT_RETRY } from "./rateLimit.ts"

/** The token pair and where the client goes (the SDK's profile: `MODAL_SERVER_URL`, ~/.modal.toml, when absent). */
export interface ModalConnection {
  readonly tokenId: Redacted.Redacted<string>
  readonly tokenSecret: Redacted.Redacted<string>
  readonly environment?: string | undefined
  readonly serverUrl?: string | undefined
}

/** What kind of refusal Modal answered with: the ones a caller acts on differently. */
export type ModalErrorKind = "unauthorized" | "rate-limited" | "not-found" | "other"

/** A failed SDK call: what we were doing, Modal's text, and its kind. */
export class ModalError extends Error {
  readonly kind: ModalErrorKind
  constructor(what: string, kind: ModalErrorKind, text: string) {
    super(`Modal could not ${what}: ${text}`)
    this.kind = kind
  }
}

/** gRPC status codes (nice-grpc's `Status`) the SDK's errors carry. */
const NOT_FOUND = 5
const RESOURCE_EXHAUSTED = 8
const UNAUTHENTICATED = 16

/** What the runtime reads from an SDK error (structurally: nice-grpc's ClientError, the SDK's own classes). */
interface SdkError {
  readonly name?: string
  readonly code?: number
  readonly details?: string
  readonly message?: string
}

const kindOf = (error: SdkError): ModalErrorKind =>
  error.code === UNAUTHENTICATED
    ? "unauthorized"
    : error.code === RESOURCE_EXHAUSTED
    ? "rate-limited"
    : error.code === NOT_FOUND || error.name === "NotFoundError"
    ? "not-found"
    : "other"

/** Modal's text: a gRPC error's details (its message repeats the method path and status name), else the message. */
const textOf = (error: SdkError): string =>
  typeof error.details === "string" && error.details !== "" ? error.details : String(error.message ?? error)

/** One SDK call as an Effect: `ModalError` on failure, RESOURCE_EXHAUSTED retried by `retry`. */
export const modalCall = <A>(
  what: string,
  call: () => Promise<A>,
  retry: Schedule.Schedule<unknown> = MODAL_RATE_LIMIT_RETRY
): Effect.Effect<A, ModalError> =>
  Effect.tryPromise({
    try: call,
    catch: (error) => {
      const sdkError = (typeof error === "object" && error !== null ? error : { message: String(error) }) as SdkError
      return new ModalError(what, kindOf(sdkError), textOf(sdkError))
    }
  }).pipe(Effect.retry({ schedule: retry, while: (error) => error.kind === "rate-limited" }))

const loadModal = Effect.tryPromise({
  try: () => import("modal"),
  catch: (cause) =>
    new RuntimeStartError({
      message: (cause as { code?: string }).code === "ERR_MODULE_NOT_FOUND"
        ? "ModalRuntime needs modal, an optional peer dependency: npm install modal@^0.11"
        : `Cannot load modal: ${(cause as Error).message}`
    })
})

/**
 * The SDK reads its server from its profile (`MODAL_SERVER_URL`, else ~/.modal.toml, else Modal's
 * API) when a client is constructed, and takes no URL of its own: a `serverUrl` is set in that
 * variable for the constructor's synchronous run only, then the variable is put back.
 */
const withServerUrl = <A>(serverUrl: string | undefined, make: () => A): A => {
  if (serverUrl === undefined) return make()
  const before = process.env["MODAL_SERVER_URL"]
  process.env["MODAL_SERVER_URL"] = serverUrl
  try {
    return make()
  } finally {
    if (before === undefined) delete process.env["MODAL_SERVER_URL"]
    else process.env["MODAL_SERVER_URL"] = before
  }
}

/** A client for one layer or pool, closed with the scope. */
export const modalClient = Effect.fn("ModalRuntime.client")(function*(connection: ModalConnection) {
  const sdk = yield* loadModal
  return yield* Effect.acquireRelease(
    Effect.try({
      try: (): ModalClient =>
        withServerUrl(connection.serverUrl, () =>
          new sdk.ModalClient({
            tokenId: Redacted.value(connection.tokenId),
            tokenSecret: Redacted.value(connection.tokenSecret),
            ...(connection.environment === undefined ? {} : { environment: connection.environment })
          })),
      catch: (cause) => new RuntimeStartError({ message: `Modal: cannot make a client: ${(cause as Error).message}` })
    }),
    (client) => Effect.sync(() => client.close())
  )
})
