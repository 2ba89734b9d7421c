/**
 * What an HTTP status says about a failed provider call, the same for every provider whose API
 * answers in HTTP: a driver's classifier (services/Driver.ts `classify`) starts from it and tells
 * apart only what its provider answers one status for (a quota as a 403, a missing image as a 404).
 */
import type { ProviderReason } from "../schema/errors.ts"

const BY_STATUS: Readonly<Record<number, ProviderReason>> = {
  400: "invalid",
  401: "unauthorized",
  403: "forbidden",
  404: "not-found",
  408: "timeout",
  409: "transition",
  410: "not-found",
  422: "invalid",
  429: "rate-limited",
  502: "unavailable",
  503: "unavailable",
  504: "unavailable"
}

/** The reason of a status (none, or one without a meaning of its own: `unknown`). */
export const reasonOfStatus = (status: number | undefined): ProviderReason =>
  (status === undefined ? undefined : BY_STATUS[status]) ?? "unknown"
