/**
 * `POST /execute_action` on Node's request, before Effect's HTTP app (server/frontDoor.ts): an
 * agent's every step is one, and Effect's server, router and gate cost about as much CPU per
 * action as the executor itself (docs/design-notes.md, "The lean path"). It answers what the
 * route (routes/actions.ts) answers, byte for byte, by running the same code on the body
 * (`jsonOfBytes`, `answerAction`) in the server's own services, so the action's span and
 * metrics are as they were. It takes only the plain case and declines (hands over untouched)
 * every request the gate or the body reader would treat otherwise, so those answers come from
 * the very code they always came from:
 * - another method, path or target form (the gate's 400/404/405), HTTP/2;
 * - a missing or wrong session key (the gate's 403), checked here with the gate's own test;
 * - no `content-length`, an empty or chunked body, or one declared over the JSON body limit (413);
 * - any tracer but Effect's native one: then Effect's server records its request span with the
 *   header redaction, which this path does not rebuild. With the native tracer Effect's server
 *   makes no span either (its spans have no backend), so nothing observable differs.
 * Stopping the server interrupts the actions in flight here as there (the layer's scope), and a
 * client that goes away interrupts its own. The same door takes a plain `GET /alive` (leanAlive.ts).
 */
import { Cause, Effect, Exit, Fiber, Layer, type Redacted, Scope, Tracer } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { Limits } from "../executor/limits.ts"
import { ActionExecutor } from "../services/ActionExecutor.ts"
import { keyCheck } from "./auth.ts"
import type { FrontDoor } from "./frontDoor.ts"
import { takesAlive } from "./leanAlive.ts"
import { writeJson } from "./rawJson.ts"
import { failure, jsonOfBytes } from "./responses.ts"
import { answerAction } from "./routes/actions.ts"
import { ENDPOINTS } from "./routes/paths.ts"
import type { ServerClock } from "./serverInfo.ts"

const [METHOD, PATH] = ENDPOINTS.executeAction

/**
 * Answer as Effect's server answers the route's exit: the observation; a failure as the route's
 * `failed` does (the length was checked before reading, so never a 413); a defect 500 and an
 * interruption by the server's stop 503, both empty.
 */
const respond = (response: ServerResponse, exit: Exit.Exit<unknown, { readonly message: string }>) => {
  if (response.destroyed || response.writableEnded) return
  if (Exit.isSuccess(exit)) return writeJson(response, 200, exit.value)
  const error = Cause.findErrorOption(exit.cause)
  if (error._tag === "Some") {
    const { message, status } = failure(error.value)
    return writeJson(response, status, { detail: message })
  }
  response.writeHead(Cause.hasDies(exit.cause) ? 500 : 503).end()
}

/** Set `door`'s handler for the server's lifetime (this layer's scope). */
export const leanExecute = (
  door: FrontDoor,
  keySha256: Redacted.Redacted<Buffer> | undefined,
  clock: ServerClock
): Layer.Layer<never, never, ActionExecutor> =>
  Layer.effectDiscard(Effect.gen(function*() {
    if ((yield* Tracer.Tracer) !== Tracer.nativeTracer) return
    const context = yield* Effect.context<ActionExecutor>()
    const limits = yield* Limits
    const answer = answerAction(yield* ActionExecutor, clock)
    const authorised = keyCheck(keySha256)
    const inFlight = yield* Scope.fork(yield* Effect.scope, "parallel")
    const run = Effect.runForkWith(context)

    const execute = (body: Buffer, response: ServerResponse) => {
      const fiber = Fiber.runIn(run(Effect.flatMap(jsonOfBytes(body, limits), answer)), inFlight)
      fiber.addObserver((exit) => respond(response, exit))
      response.on("close", () => {
        if (!response.writableEnded) fiber.interruptUnsafe()
      })
    }

    door.handler = (request: IncomingMessage, response: ServerResponse) => {
      if (takesAlive(request, response)) return true
      const declared = Number(request.headers["content-length"])
      if (
        request.method !== METHOD || request.url !== PATH || request.httpVersionMajor !== 1 ||
        request.headers["transfer-encoding"] !== undefined || !(declared > 0 && declared <= limits.jsonBodyBytes) ||
        !authorised(request.headers)
      ) return false
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => execute(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), response))
      return true
    }
    yield* Effect.addFinalizer(() => Effect.sync(() => door.handler = undefined))
  }))
