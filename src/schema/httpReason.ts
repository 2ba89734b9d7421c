/**
 * What an HTTP status means as a `ProviderReason`, the common ground of every classifier (the
 * drivers' and the engine clients'): an API that answers with plain HTTP statuses maps them the
 * same way, and a classifier states only where its provider means something else by one
 * (`overrides`: Docker's 500 is the engine's own error, not worth waiting out).
 */
import type { ProviderReason } from "./errors.ts"

const BY_STATUS: Readonly<Record<number, ProviderReason>> = {
  400: "invalid",
  401: "unauthorized",
  402: "quota",
  403: "forbidden",
  404: "not-found",
  408: "timeout",
  409: "conflict",
  410: "not-found",
  422: "invalid",
  429: "rate-limited"
}

/**
 * The reason of `status`: the provider's `overrides` first, then the common table; any other 5xx is
 * `unavailable` (worth waiting out), an unknown 4xx or none `unknown`.
 */
export const reasonOfStatus = (
  status: number | undefined,
  overrides: Readonly<Record<number, ProviderReason>> = {}
): ProviderReason =>
  status === undefined
    ? "unknown"
    : overrides[status] ?? BY_STATUS[status] ?? (status >= 500 ? "unavailable" : "unknown")
