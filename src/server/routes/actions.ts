/**
 * `POST /execute_action` (OpenHands), and our extensions
 * `POST /v1/execute_action/stream` (a command's output as NDJSON while it runs,
 * then the observation) and `POST /v1/env` (add environment variables).
 */
import { Effect, Queue, Schema, Stream } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { unrecognizedCommand } from "../../executor/editor/OHEditor.ts"
import { instrumentAction } from "../../runtime/telemetry.ts"
import { type Action, FileEditCommand } from "../../schema/Action.ts"
import { FileEditObservation } from "../../schema/Observation.ts"
import { decodeAction, encodeObservation } from "../../schema/wire.ts"
import { ActionExecutor } from "../../services/ActionExecutor.ts"
import { BadRequest, failed, isRecord, jsonBody } from "../responses.ts"
import type { ServerClock } from "../serverInfo.ts"
import { ENDPOINTS } from "./paths.ts"

/** The `action` of an `{"action": {...}}` body, as sent. */
const actionOf = (body: unknown): Effect.Effect<unknown, BadRequest> =>
  isRecord(body) && "action" in body
    ? Effect.succeed(body["action"])
    : Effect.fail(new BadRequest(400, "The body must be a JSON object {\"action\": {...}}."))

const actionJson = Effect.flatMap(jsonBody, actionOf)

const decoded = (json: unknown) => decodeAction(json).pipe(Effect.mapError((e) => new BadRequest(400, e.message)))

/** The `action` of an `{"action": {...}}` body, decoded. */
const actionFromBody = Effect.flatMap(actionJson, decoded)

const isEditCommand = Schema.is(FileEditCommand)

/**
 * An edit whose command FileEditAction's literal union refuses (an LLM's invention, sent by an
 * OpenHands client): OpenHands answers with the editor's message, not an error, so the agent can
 * correct itself. Unlike OpenHands, the path is not checked first.
 */
const unknownEditCommand = (json: unknown): FileEditObservation | undefined => {
  if (!isRecord(json) || json["action"] !== "edit" || !isRecord(json["args"])) return undefined
  const { command, path } = json["args"]
  if (typeof command !== "string" || typeof path !== "string" || isEditCommand(command)) return undefined
  return new FileEditObservation({
    content: `ERROR:\n${unrecognizedCommand(command)}`,
    path,
    implSource: "oh_aci",
    diff: ""
  })
}

/** Run an action in its span and metrics, as every runtime does on the client side (`runtime.kind` "server"). */
const execute = (executor: ActionExecutor["Service"], action: Action, onOutput?: (text: string) => void) =>
  instrumentAction("server", action, executor.execute(action, onOutput))

const encoder = new TextEncoder()
const ndjson = (value: unknown) => encoder.encode(`${JSON.stringify(value)}\n`)

/** Output events while the command runs, then `{"type": "observation", ...}` (or `{"type": "error"}`). */
const streamAction = (executor: ActionExecutor["Service"], action: Action) =>
  Stream.callback<Uint8Array>((queue) =>
    execute(executor, action, (text) => void Queue.offerUnsafe(queue, ndjson({ type: "output", text }))).pipe(
      Effect.match({
        onSuccess: (observation) => ndjson({ type: "observation", observation: encodeObservation(observation) }),
        onFailure: (error) => ndjson({ type: "error", detail: error.message })
      }),
      Effect.flatMap((last) => Queue.offer(queue, last)),
      Effect.ensuring(Queue.end(queue)),
      Effect.forkScoped
    )
  )

/**
 * `/execute_action`'s work on a JSON body: the observation's wire JSON, or why not. Shared by the
 * route and the lean handler that takes the same requests first (server/leanExecute.ts).
 */
export const answerAction = (executor: ActionExecutor["Service"], clock: ServerClock) => (body: unknown) =>
  Effect.gen(function*() {
    const json = yield* actionOf(body)
    clock.lastActionAt = Date.now()
    const answered = unknownEditCommand(json)
    return encodeObservation(answered ?? (yield* execute(executor, yield* decoded(json))))
  })

export const actionRoutes = (clock: ServerClock) =>
  HttpRouter.use(Effect.fn(function*(router) {
    const executor = yield* ActionExecutor
    const answer = answerAction(executor, clock)
    yield* router.add(
      ...ENDPOINTS.executeAction,
      jsonBody.pipe(
        Effect.flatMap(answer),
        Effect.map((observation) => HttpServerResponse.jsonUnsafe(observation)),
        Effect.catch(failed)
      )
    )
    yield* router.add(
      ...ENDPOINTS.executeActionStream,
      Effect.gen(function*() {
        const action = yield* actionFromBody
        clock.lastActionAt = Date.now()
        return HttpServerResponse.stream(streamAction(executor, action), { contentType: "application/x-ndjson" })
      }).pipe(Effect.catch(failed))
    )
    yield* router.add(
      ...ENDPOINTS.env,
      Effect.gen(function*() {
        const body = yield* jsonBody
        const vars = isRecord(body) ? body["vars"] : undefined
        if (!isRecord(vars) || !Object.values(vars).every((v) => typeof v === "string")) {
          return yield* Effect.fail(new BadRequest(400, "The body must be {\"vars\": {\"NAME\": \"value\", ...}}."))
        }
        // Optional (older clients send none): names in `vars` whose values the server masks in observations.
        const secrets = isRecord(body) ? body["secrets"] ?? [] : []
        if (
          !Array.isArray(secrets) || !secrets.every((name) => typeof name === "string" && Object.hasOwn(vars, name))
        ) {
          return yield* Effect.fail(new BadRequest(400, "\"secrets\" must be a list of names given in \"vars\"."))
        }
        yield* executor.setEnv(vars as Record<string, string>, secrets as ReadonlyArray<string>).pipe(
          Effect.mapError((e) => new BadRequest(400, e.message))
        )
        return HttpServerResponse.jsonUnsafe({ detail: "Environment updated" })
      }).pipe(Effect.catch(failed))
    )
  }))
