/**
 * The state of one named object as a Stream: its current state (`undefined`
 * while it does not exist), then its state after every change, from a list and
 * a client-node `Watch` resumed at the list's resourceVersion (the informer
 * pattern, so no change between the two is missed, and absence is observable:
 * "wait until the pod is gone" needs it). A watch ends by itself (the server's
 * timeout, client-node's 30 s inactivity abort); it is then opened again from
 * the last resourceVersion it saw, kept current on a quiet watch by bookmarks,
 * and listed again only after a 410 Gone. A refusal (403, 404 for an unserved
 * resource) fails the stream.
 */
import { type KubeConfig, type KubernetesObject, KubernetesObjectApi, Watch } from "@kubernetes/client-node"
import { Cause, Effect, Queue, Stream } from "effect"
import { KubeApiError, listObjects } from "./apiCall.ts"

/** A resource type as both the generic client (apiVersion, kind) and the watch path (plural) name it. */
export interface ObjectKind {
  readonly apiVersion: string
  readonly kind: string
  readonly plural: string
}

/** Pods: what both the bare-pod runtime and a Sandbox's readiness follow. */
export const POD: ObjectKind = { apiVersion: "v1", kind: "Pod", plural: "pods" }

/** `/api/v1/namespaces/ns/pods`, `/apis/agents.x-k8s.io/v1alpha1/namespaces/ns/sandboxes`. */
const collectionPath = (kind: ObjectKind, namespace: string) =>
  `/${kind.apiVersion.includes("/") ? "apis" : "api"}/${kind.apiVersion}/namespaces/${namespace}/${kind.plural}`

/** 410 Gone: the resourceVersion a watch resumed from was compacted away. */
const GONE = 410

/** An inactivity or server-side end of a watch (or our own abort): watch again from where it was. */
const endedQuietly = (error: unknown) => {
  const name = (error as { readonly name?: string } | null | undefined)?.name
  return error === null || error === undefined || name === "TimeoutError" || name === "AbortError"
}

const failure = (what: string, error: unknown) => {
  const status = (error as { readonly statusCode?: unknown; readonly code?: unknown }).statusCode ??
    (error as { readonly code?: unknown }).code
  return new KubeApiError({
    status: typeof status === "number" ? status : undefined,
    operation: what,
    message: `${what}: ${String(error)}`
  })
}

/** An ERROR event's Status (the watch ends after it): a 410 means its resourceVersion was compacted away. */
interface WatchStatus {
  readonly code?: number
  readonly message?: string
}

/**
 * Watch the object `name` of `kind` in `namespace` for as long as the stream runs: listed once,
 * then watched with bookmarks, so a watch that ends quietly (client-node's 30 s inactivity abort,
 * the server's time-out) is opened again from the last resourceVersion it saw, without a list.
 * Only a 410 Gone (that resourceVersion compacted away) lists again.
 */
export const watchState = <T extends KubernetesObject>(
  kc: KubeConfig,
  kind: ObjectKind,
  namespace: string,
  name: string
): Stream.Stream<T | undefined, KubeApiError> =>
  Stream.callback<T | undefined, KubeApiError>((queue) =>
    Effect.acquireRelease(
      Effect.sync(() => {
        const api = KubernetesObjectApi.makeApiClient(kc)
        const what = `watch ${kind.kind} ${namespace}/${name}`
        const fieldSelector = `metadata.name=${name}`
        const state = {
          closed: false,
          controller: undefined as AbortController | undefined,
          resourceVersion: undefined as string | undefined,
          gone: false
        }
        const fail = (error: unknown) => {
          if (state.closed) return
          // Closed at once: the watch's end that follows an ERROR event must not open it again.
          state.closed = true
          Queue.failCauseUnsafe(queue, Cause.fail(failure(what, error)))
        }
        const seen = (type: string, object: T) => {
          if (type === "ERROR") {
            const status = object as WatchStatus
            if (status.code === GONE) return void (state.gone = true)
            return fail(Object.assign(new Error(status.message ?? "watch error"), { statusCode: status.code }))
          }
          state.resourceVersion = object.metadata?.resourceVersion ?? state.resourceVersion
          if (type !== "BOOKMARK") Queue.offerUnsafe(queue, type === "DELETED" ? undefined : object)
        }
        const watch = async (): Promise<void> => {
          state.controller = await new Watch(kc).watch(
            collectionPath(kind, namespace),
            { fieldSelector, resourceVersion: state.resourceVersion, allowWatchBookmarks: true },
            seen,
            (error: unknown) => {
              if (state.closed) return
              const gone = state.gone || (error as { readonly statusCode?: unknown } | null)?.statusCode === GONE
              state.gone = false
              if (gone) return void list().catch(fail)
              if (endedQuietly(error)) return void watch().catch(fail)
              fail(error)
            }
          )
          if (state.closed) state.controller.abort()
        }
        const list = async (): Promise<void> => {
          const listed = await listObjects<T>(api, kind, namespace, { fieldSelector })
          if (state.closed) return
          Queue.offerUnsafe(queue, listed.items[0])
          state.resourceVersion = listed.metadata?.resourceVersion
          await watch()
        }
        void list().catch(fail)
        return state
      }),
      (state) =>
        Effect.sync(() => {
          state.closed = true
          state.controller?.abort()
        })
    )
  )
