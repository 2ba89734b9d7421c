/**
 * A rolldown plugin for the payload (build-payload.ts): the `ws` package is evaluated on its first
 * use, not at the server's boot. `@effect/platform-node`'s HTTP server imports it for WebSocket
 * upgrades, which the action server never makes through Effect (its own upgrades are relayed,
 * src/server/upgrade.ts), and evaluating `ws` requires `node:https`, `node:tls` and `node:zlib`:
 * ~25 ms of a ~130 ms boot. Its ES import is answered by a module whose two classes are proxies
 * that load `ws` (bundled, through `require`, which rolldown evaluates where it is called) on
 * their first construction or property read, so `new`, statics and `instanceof` behave as on the
 * real classes.
 */
import type { Plugin } from "rolldown"

const ID = "\0lazy-ws"

const SOURCE = `
let loaded
const ws = () => (loaded ??= require("ws"))
const lazy = (pick) => new Proxy(function() {}, {
  construct: (_, args, newTarget) => Reflect.construct(pick(), args),
  apply: (_, self, args) => Reflect.apply(pick(), self, args),
  get: (_, key) => Reflect.get(pick(), key),
  has: (_, key) => Reflect.has(pick(), key)
})
export const WebSocket = lazy(() => ws().WebSocket)
export const WebSocketServer = lazy(() => ws().WebSocketServer)
export default WebSocket
`

export const lazyWs = (): Plugin => ({
  name: "lazy-ws",
  resolveId: (source, _importer, { kind }) => source === "ws" && kind !== "require-call" ? ID : null,
  load: (id) => id === ID ? SOURCE : null
})
