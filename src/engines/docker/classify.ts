/**
 * What a failed Engine API call means (services/Driver.ts `Classified`): dockerode puts the
 * engine's HTTP status on its errors (`statusCode`) and the engine's own text in `json.message`;
 * a refused connection has no status (the engine is not there).
 */
import type { ProviderReason } from "../../schema/errors.ts"
import type { Classified } from "../../services/Driver.ts"

const BY_STATUS: Readonly<Record<number, ProviderReason>> = {
  400: "invalid",
  401: "unauthorized",
  403: "forbidden",
  404: "not-found",
  409: "conflict",
  429: "rate-limited",
  500: "unknown",
  502: "unavailable",
  503: "unavailable",
  504: "unavailable"
}

/** HTTP status of a dockerode error (404 for "no such container"), if any. */
export const statusOf = (error: unknown): number | undefined =>
  typeof error === "object" && error !== null ? (error as { statusCode?: number }).statusCode : undefined

export const classifyDocker = (cause: unknown): Classified => {
  const status = statusOf(cause)
  const text = String((cause as Error | null)?.message ?? cause)
  const code = (cause as { code?: string } | null)?.code
  const reason = status === undefined
    ? code === "ECONNREFUSED" || code === "ENOENT" ? "unavailable" : "unknown"
    : BY_STATUS[status] ?? (status >= 500 ? "unknown" : "invalid")
  return { reason, status, text }
}
