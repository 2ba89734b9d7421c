/**
 * `?watch=true` streams: newline-delimited `{type, object}` WatchEvents, as
 * @kubernetes/client-node's `Watch` reads them. Without a resourceVersion (or
 * with "0") the stream starts with an ADDED event per existing object; with one,
 * it replays the changes after it, so a watcher that reconnects misses nothing.
 * With `allowWatchBookmarks` it sends BOOKMARK events (the current
 * resourceVersion, every `bookmarkMs` and as the stream ends), so a quiet
 * watcher resumes where it was instead of listing again. A resourceVersion
 * older than the last compaction (`Store.compact`) is answered, as the
 * apiserver answers it, with an ERROR event of a 410 Expired Status, and a
 * compaction ends the open streams the same way: the watcher must list again.
 */
import type { ServerResponse } from "node:http"
import { apiVersionOf, type ResourceType } from "./resources.ts"
import type { Change, KObject, Store } from "./store.ts"

export interface WatchRequest {
  readonly type: ResourceType
  readonly namespace: string | undefined
  readonly matches: (object: KObject) => boolean
  readonly resourceVersion: string | null
  readonly timeoutSeconds: number | undefined
  readonly allowWatchBookmarks: boolean
  /** How often a bookmark is sent (the apiserver's is about a minute). */
  readonly bookmarkMs: number
  /** Where the stream registers how to end it as its time-out would (`StandIn.endWatches`); returns the unregister. */
  readonly register: (end: () => void) => () => void
}

/** The Status of an ERROR event for a resourceVersion compacted away. */
const expired = (from: number, oldest: number) => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message: `too old resource version: ${from} (${oldest})`,
  reason: "Expired",
  code: 410
})

/** Stream the changes of `request` to `response` until the client goes or `timeoutSeconds` pass. */
export const serveWatch = (store: Store, request: WatchRequest, response: ServerResponse) => {
  const relevant = (change: Change) =>
    change.resource === request.type
    && (request.namespace === undefined || change.object.metadata.namespace === request.namespace)
    && request.matches(change.object)
  const send = (change: Change) => response.write(`${JSON.stringify({ type: change.type, object: change.object })}\n`)

  const bookmark = () =>
    response.write(
      `${
        JSON.stringify({
          type: "BOOKMARK",
          object: {
            kind: request.type.kind,
            apiVersion: apiVersionOf(request.type),
            metadata: { resourceVersion: store.resourceVersion }
          }
        })
      }\n`
    )
  const gone = (from: number) => {
    response.end(`${JSON.stringify({ type: "ERROR", object: expired(from, store.compactedAt) })}\n`)
  }

  response.writeHead(200, { "content-type": "application/json", "cache-control": "no-cache" })
  const from = request.resourceVersion === null || request.resourceVersion === "" || request.resourceVersion === "0"
    ? undefined
    : Number(request.resourceVersion)
  if (from !== undefined && from < store.compactedAt) return gone(from)
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
  const uncompact = store.onCompaction(() => gone(from ?? Number(store.resourceVersion)))
  const bookmarks = request.allowWatchBookmarks ? setInterval(bookmark, request.bookmarkMs) : undefined
  const end = () => {
    if (request.allowWatchBookmarks) bookmark()
    response.end()
  }
  const unregister = request.register(end)
  const timer = request.timeoutSeconds === undefined ? undefined : setTimeout(end, request.timeoutSeconds * 1000)
  response.on("close", () => {
    unsubscribe()
    unregister()
    uncompact()
    clearInterval(bookmarks)
    clearTimeout(timer)
  })
}
