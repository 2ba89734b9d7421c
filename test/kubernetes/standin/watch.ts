/**
 * `?watch=true` streams: newline-delimited `{type, object}` WatchEvents, as
 * @kubernetes/client-node's `Watch` reads them. Without a resourceVersion (or
 * with "0") the stream starts with an ADDED event per existing object; with one,
 * it replays the changes after it, so a watcher that reconnects misses nothing.
 */
import type { ServerResponse } from "node:http"
import type { ResourceType } from "./resources.ts"
import type { Change, KObject, Store } from "./store.ts"

export interface WatchRequest {
  readonly type: ResourceType
  readonly namespace: string | undefined
  readonly matches: (object: KObject) => boolean
  readonly resourceVersion: string | null
  readonly timeoutSeconds: number | undefined
}

/** Stream the changes of `request` to `response` until the client goes or `timeoutSeconds` pass. */
export const serveWatch = (store: Store, request: WatchRequest, response: ServerResponse) => {
  const relevant = (change: Change) =>
    change.resource === request.type
    && (request.namespace === undefined || change.object.metadata.namespace === request.namespace)
    && request.matches(change.object)
  const send = (change: Change) => response.write(`${JSON.stringify({ type: change.type, object: change.object })}\n`)

  response.writeHead(200, { "content-type": "application/json", "cache-control": "no-cache" })
  const from = request.resourceVersion === null || request.resourceVersion === "" || request.resourceVersion === "0"
    ? undefined
    : Number(request.resourceVersion)
  if (from === undefined) {
    for (const object of store.list(request.type, request.namespace, request.matches)) {
      send({ type: "ADDED", resource: request.type, object })
    }
  } else {
    for (const change of store.history) {
      if (Number(change.object.metadata.resourceVersion) > from && relevant(change)) send(change)
    }
  }
  const unsubscribe = store.subscribe((change) => relevant(change) && send(change))
  const timer = request.timeoutSeconds === undefined
    ? undefined
    : setTimeout(() => response.end(), request.timeoutSeconds * 1000)
  response.on("close", () => {
    unsubscribe()
    clearTimeout(timer)
  })
}
