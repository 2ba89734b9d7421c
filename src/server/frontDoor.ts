/**
 * A Node HTTP server whose requests are offered to one hand-written handler before Effect's HTTP
 * app sees them (server/leanExecute.ts takes `POST /execute_action` there). The handler declines
 * a request by returning false, and the request then goes to the server's `request` listeners
 * (Effect's) exactly as if the door were not there; until a handler is set, every request does.
 * The door is on `emit`, not a listener of its own, because a taken request must not also reach
 * Effect's listener, which `NodeHttpServer` adds and removes by itself.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http"

/** Takes a request (true) or declines it, untouched (false). */
export type FrontHandler = (request: IncomingMessage, response: ServerResponse) => boolean

/** Where the handler is set once the server's services exist, and unset when they go. */
export interface FrontDoor {
  handler: FrontHandler | undefined
}

/** `server`, its requests offered to `door.handler` first. */
export const withFrontDoor = (server: Server, door: FrontDoor): Server => {
  const emit = server.emit.bind(server) as (event: string | symbol, ...args: Array<unknown>) => boolean
  server.emit =
    ((event: string | symbol, ...args: Array<unknown>) =>
      (event === "request" && door.handler?.(args[0] as IncomingMessage, args[1] as ServerResponse) === true) ||
      emit(event, ...args)) as Server["emit"]
  return server
}
