/**
 * Runtime lifecycle states, named as OpenHands' `RuntimeStatus` enum (spec §8.2).
 * A runtime exposes them as a stream; `runtimeStatusWireValue` gives the string
 * OpenHands front ends expect (`STATUS$READY`, ...).
 */
import { Schema } from "effect"

export const RuntimeStatus = Schema.Literals([
  "STOPPED",
  "BUILDING_RUNTIME",
  "STARTING_RUNTIME",
  "RUNTIME_STARTED",
  "SETTING_UP_WORKSPACE",
  "SETTING_UP_GIT_HOOKS",
  "READY",
  // Ours (OpenHands has none): the sandbox is frozen by `pause`; actions fail with RuntimePausedError or wait.
  "PAUSED",
  "ERROR",
  "ERROR_RUNTIME_DISCONNECTED",
  "ERROR_LLM_AUTHENTICATION",
  "ERROR_LLM_SERVICE_UNAVAILABLE",
  "ERROR_LLM_INTERNAL_SERVER_ERROR",
  "ERROR_LLM_OUT_OF_CREDITS",
  "ERROR_LLM_CONTENT_POLICY_VIOLATION",
  "AGENT_RATE_LIMITED_STOPPED_MESSAGE",
  "GIT_PROVIDER_AUTHENTICATION_ERROR",
  "LLM_RETRY",
  "ERROR_MEMORY"
])
export type RuntimeStatus = typeof RuntimeStatus.Type

/** The enum value OpenHands sends for a status (`STATUS$<NAME>`, one `CHAT_INTERFACE$` exception). */
export const runtimeStatusWireValue = (status: RuntimeStatus): string =>
  status === "AGENT_RATE_LIMITED_STOPPED_MESSAGE" ? `CHAT_INTERFACE$${status}` : `STATUS$${status}`
