/**
 * A Node HTTP server whose requests wait at a door until the server is ready for them, and are
 * then offered to one hand-written handler before Effect's HTTP app sees them
 * (server/leanExecute.ts takes `POST /execute_action` there).
 *
 * - **Held until open.** The server listens while its shell is still starting (bash's first prompt
 *   takes ~15 ms, the listener and the routes about as long: ActionServer.ts builds them side by
 *   side). A request that comes before `openDoor` is held, not dropped, and goes on once the door
 *   opens, when the shell has prompted and the routes are served: Node's server drops a request
 *   that finds no listener, and a client polling `/alive` then waited out its attempt's timeout.
 *   The server's other events (upgrades included) are held alike.
 * - **The handler.** It declines a request by returning false, and the request then goes to the
 *   server's `request` listeners (Effect's) exactly as if the door were not there; until a handler
 *   is set, every request does. The door is on `emit`, not a listener of its own, because a taken
 *   request must not also reach Effect's listener, which `NodeHttpServer` adds and removes by itself.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http"

/** Takes a request (true) or declines it, untouched (false). */
export type FrontHandler = (request: IncomingMessage, response: ServerResponse) => boolean

/** Where the handler is set once the server's services exist, and unset when they go. */
export interface FrontDoor {
  handler: FrontHandler | undefined
  /** The events that came before the door opened, each to emit again, in order; `undefined` once it is open. */
  held: Array<() => void> | undefined
}

/** A closed door without a handler. */
export const makeFrontDoor = (): FrontDoor => ({ handler: undefined, held: [] })

/** What a client sends: held while the door is closed. The server's own events are not. */
const FROM_CLIENTS = new Set(["request", "checkContinue", "checkExpectation", "upgrade", "connect"])

/** `server`, its clients' events held until `openDoor` and its requests offered to `door.handler` first. */
export const withFrontDoor = (server: Server, door: FrontDoor): Server => {
  const emit = server.emit.bind(server) as (event: string | symbol, ...args: Array<unknown>) => boolean
  server.emit = ((event: string | symbol, ...args: Array<unknown>) => {
    if (door.held !== undefined && typeof event === "string" && FROM_CLIENTS.has(event)) {
      door.held.push(() => server.emit(event, ...args))
      return true
    }
    return (event === "request" && door.handler?.(args[0] as IncomingMessage, args[1] as ServerResponse) === true) ||
      emit(event, ...args)
  }) as Server["emit"]
  return server
}

/** Open `door`: what was held goes on, in the order it came. */
export const openDoor = (door: FrontDoor): void => {
  const held = door.held ?? []
  door.held = undefined
  for (const release of held) release()
}
