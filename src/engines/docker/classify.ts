/**
 * What a failed Engine API call means (services/Driver.ts `Classified`): dockerode puts the
 * engine's HTTP status on its errors (`statusCode`) and the engine's own text in `json.message`;
 * a refused connection has no status (the engine is not there).
 */
import type { ProviderReason } from "../../schema/errors.ts"
import { reasonOfStatus } from "../../schema/httpReason.ts"
import type { Classified } from "../../services/Driver.ts"

/** Where the engine means otherwise than the common table: its 500 is its own error, not worth waiting out. */
const ENGINE: Readonly<Record<number, ProviderReason>> = { 409: "conflict", 500: "unknown" }

export const statusOf = (error: unknown): number | undefined =>
  typeof error === "object" && error !== null ? (error as { statusCode?: number }).statusCode : undefined

export const classifyDocker = (cause: unknown): Classified => {
  const status = statusOf(cause)
  const text = String((cause as Error | null)?.message ?? cause)
  const code = (cause as { code?: string } | null)?.code
  const reason = status === undefined
    ? code === "ECONNREFUSED" || code === "ENOENT" ? "unavailable" : "unknown"
    : reasonOfStatus(status, ENGINE)
  return { reason, status, text }
}
