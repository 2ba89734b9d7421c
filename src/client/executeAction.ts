/**
 * Running an action over HTTP: `POST /execute_action` answers with the observation; with an
 * output listener, `POST /v1/execute_action/stream` answers at once with NDJSON events (output
 * chunks, then the observation), so the action's wire timeout covers reading it to the end and
 * interrupting closes the connection, which stops the action.
 */
import { Effect, Stream } from "effect"
import { HttpClientRequest, type HttpClientResponse } from "effect/http"
import type { Action } from "../schema/Action.ts"
import { type RuntimeDisconnectedError, RuntimeRequestError } from "../schema/errors.ts"
import type { Observation } from "../schema/Observation.ts"
import { decodeObservation, encodeAction, isRecord } from "../schema/wire.ts"
import { actionHttpTimeout } from "./policies.ts"
import { timedOut, type Transport } from "./transport.ts"

const STREAM = "execute_action/stream"

/** `actions` sends `/execute_action` (the lean client where it applies); `transport` everything else. */
export const makeExecute = (transport: Transport, actions: Transport, defaultTimeoutSeconds: number) => {
  const { disconnected, send } = transport

  /** One line of the NDJSON stream: output goes to `onOutput`; the observation is returned. */
  const streamEvent = (
    line: string,
    onOutput: (text: string) => void
  ): Effect.Effect<Observation | undefined, RuntimeDisconnectedError> => {
    let event: unknown
    try {
      event = JSON.parse(line)
    } catch {
      return disconnected(STREAM, "the server sent a line that is not JSON")
    }
    if (!isRecord(event)) return disconnected(STREAM, "the server sent an event that is not a JSON object")
    if (event["type"] === "output" && typeof event["text"] === "string") {
      onOutput(event["text"])
      return Effect.succeed(undefined)
    }
    if (event["type"] === "observation") {
      return decodeObservation(event["observation"]).pipe(
        Effect.catch((e) => disconnected(STREAM, `the server sent an invalid observation: ${e.message}`))
      )
    }
    // The executor failed (its shell could not restart): `run` gets a 500 for it.
    if (event["type"] === "error") return disconnected(STREAM, `HTTP 500 ${String(event["detail"])}`)
    return disconnected(STREAM, `the server sent an unknown event type ${JSON.stringify(event["type"])}`)
  }

  /** The events of a streamed action, in order, until the observation (a stream ending without one was cut). */
  const readStream = (response: HttpClientResponse.HttpClientResponse, onOutput: (text: string) => void) =>
    response.stream.pipe(
      Stream.decodeText,
      Stream.splitLines,
      Stream.filter((line) => line.trim() !== ""),
      Stream.mapEffect((line) => streamEvent(line, onOutput)),
      Stream.filter((observation) => observation !== undefined),
      Stream.runHead,
      Effect.catchTag("HttpClientError", (e) => disconnected(STREAM, e.message)),
      Effect.flatMap((head) =>
        head._tag === "Some"
          ? Effect.succeed(head.value)
          : disconnected(STREAM, "the stream ended before the observation")
      )
    )

  /** A server without the endpoint (OpenHands' own, an older one) is alive: it just cannot stream. */
  const noStreaming = (status: number) =>
    status === 404
      ? new RuntimeRequestError({
        status,
        message: `The action server at ${transport.baseUrl} has no POST /v1/execute_action/stream (an OpenHands or ` +
          "older server): it cannot stream output; run still works."
      })
      : undefined

  const executeStreaming = (action: Action, onOutput: (text: string) => void) => {
    const timeout = actionHttpTimeout(action, defaultTimeoutSeconds)
    return send(
      STREAM,
      HttpClientRequest.post("/v1/execute_action/stream").pipe(
        HttpClientRequest.bodyJsonUnsafe({ action: encodeAction(action) })
      ),
      timeout,
      (response) => readStream(response, onOutput),
      noStreaming
    ).pipe(Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.fail(timedOut(STREAM, timeout)) }))
  }

  return (action: Action, onOutput?: (text: string) => void) =>
    onOutput !== undefined ? executeStreaming(action, onOutput) : actions.send(
      "execute_action",
      HttpClientRequest.post("/execute_action").pipe(
        HttpClientRequest.bodyJsonUnsafe({ action: encodeAction(action) })
      ),
      actionHttpTimeout(action, defaultTimeoutSeconds),
      (response) =>
        actions.jsonOf(response).pipe(
          Effect.flatMap((json) =>
            decodeObservation(json).pipe(
              Effect.catch((e) =>
                actions.disconnected("execute_action", `the server sent an invalid observation: ${e.message}`)
              )
            )
          )
        )
    )
}
