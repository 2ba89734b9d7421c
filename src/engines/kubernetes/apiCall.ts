/**
 * client-node's promises as Effects with a readable, typed failure. client-node
 * rejects with an `ApiException` whose body is the apiserver's `Status` JSON: its
 * `message` ("sandboxes.agents.x-k8s.io \"x\" not found") is what a person needs,
 * and its code tells a missing object (404, often fine when removing) from a
 * refusal. Every request the runtime sends goes through `kubeCall` (client.ts
 * words its failures as start errors). The `ApiException` is recognised by its
 * shape, not its class: this module loads without client-node (an optional peer).
 */
import type { KubernetesObject, KubernetesObjectApi } from "@kubernetes/client-node"
import { Context, Data, Duration, Effect, Schedule } from "effect"
import type { ProviderReason } from "../../schema/errors.ts"
import { reasonOfStatus } from "../../schema/httpReason.ts"
import { retryAfterHeader, waitOut } from "../../schema/waitOut.ts"
import type { Classified } from "../../services/Driver.ts"

/** A request to the Kubernetes API failed; `status` is the HTTP code when the server answered. */
export class KubeApiError extends Data.TaggedError("KubeApiError")<{
  readonly status: number | undefined
  /** What was attempted ("create lease x"). */
  readonly operation: string
  /** `<operation>: <the API server's text>`. */
  readonly message: string
  /** The server's `Retry-After` (API Priority and Fairness sends one with its 429s). */
  readonly retryAfter?: Duration.Duration | undefined
}> {}

/**
 * How the API server's "not now" answers (429, 503 and the other 5xx but its own 504 time-out)
 * are retried: none by default (the runtime API's backend); KubernetesRuntime provides the
 * hosted runtime's `providerRetry`, so its engine calls wait out what every provider's calls do
 * (src/hosted/providerCall.ts), each try at least the server's `Retry-After` after the last.
 */
export class KubeRetry extends Context.Reference<Schedule.Schedule<unknown>>("effect-sandbox/KubeRetry", {
  defaultValue: () => Schedule.recurs(0)
}) {}

/** The reasons worth trying again: the API server said "not now", not "no". */
const WAIT_OUT: ReadonlySet<ProviderReason> = new Set(["rate-limited", "unavailable"])

const askedToWait = (error: KubeApiError) => WAIT_OUT.has(reasonOf(error.status, error.message))

/** Where the API server means otherwise than the common table: a 504 is its own time-out. */
const API_SERVER: Readonly<Record<number, ProviderReason>> = { 504: "timeout" }

/** The reason of an API server's answer: its status, and a ResourceQuota's 403 ("exceeded quota") as `quota`. */
export const reasonOf = (status: number | undefined, text: string): ProviderReason =>
  status === 403 && text.includes("exceeded quota")
    ? "quota"
    : reasonOfStatus(status, API_SERVER)

/** What one failed client-node request means (services/Driver.ts `Classified`). */
export const classifyKube = (cause: unknown): Classified => {
  const { status, text, retryAfter } = detail(cause)
  return { reason: reasonOf(status, text), status, text, ...(retryAfter === undefined ? {} : { retryAfter }) }
}

/** The answer's `Retry-After` (the API server sends whole seconds). */
const retryAfterOf = (headers: unknown): Duration.Duration | undefined =>
  retryAfterHeader((headers as Record<string, string | undefined> | undefined)?.["retry-after"])

interface Detail {
  readonly status: number | undefined
  readonly text: string
  readonly retryAfter?: Duration.Duration | undefined
}

/** The apiserver's own message from a `Status` body, else the body or the error's text. */
const detail = (error: unknown): Detail => {
  const apiError = error as { readonly code?: unknown; readonly body?: unknown; readonly headers?: unknown } | null
  if (typeof apiError?.code === "number" && "body" in apiError) {
    const body = String(apiError.body ?? "")
    const retryAfter = retryAfterOf(apiError.headers)
    try {
      const status = JSON.parse(body) as { readonly message?: string }
      return { status: apiError.code, text: status.message ?? body, retryAfter }
    } catch {
      return { status: apiError.code, text: body === "" ? `HTTP ${apiError.code}` : body, retryAfter }
    }
  }
  const code = (error as { readonly statusCode?: unknown } | null)?.statusCode
  return {
    status: typeof code === "number" ? code : undefined,
    text: error instanceof Error ? error.message : String(error)
  }
}

/**
 * Run one client-node request; `what` names it in the error ("create lease x"). A 429 or 5xx is
 * tried again under `KubeRetry`.
 */
export const kubeCall = <A>(what: string, call: () => Promise<A>): Effect.Effect<A, KubeApiError> =>
  Effect.flatMap(KubeRetry, (schedule) =>
    waitOut(
      Effect.tryPromise({
        try: call,
        catch: (error) => {
          const { status, text, retryAfter } = detail(error)
          return new KubeApiError({ status, operation: what, message: `${what}: ${text}`, retryAfter })
        }
      }),
      schedule,
      askedToWait,
      (error) => error.retryAfter
    ))

/** The same request, with a 404 (already gone) answered as `undefined`. */
export const kubeCallUnlessGone = <A>(what: string, call: () => Promise<A>) =>
  kubeCall(what, call).pipe(
    Effect.catchIf((error) => error.status === 404, () => Effect.succeed(undefined))
  )

/** The generic client's list with named selectors (its own takes ten positional arguments). */
export const listObjects = <T extends KubernetesObject>(
  api: KubernetesObjectApi,
  type: { readonly apiVersion: string; readonly kind: string },
  namespace: string,
  selectors: { readonly fieldSelector?: string; readonly labelSelector?: string }
) =>
  api.list<T>(
    type.apiVersion,
    type.kind,
    namespace,
    undefined,
    undefined,
    undefined,
    selectors.fieldSelector,
    selectors.labelSelector
  )
