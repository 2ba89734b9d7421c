/**
 * What an HTTP status means as a `ProviderReason`, the common ground of the drivers' classifiers
 * (services/Driver.ts `classify`): a provider's API that answers with plain HTTP statuses maps them
 * the same way, and a classifier adds only what its provider says otherwise (a 403 that is a quota,
 * a 404 that names a missing image, a 409 that is a transition in progress).
 */
import type { ProviderReason } from "../schema/errors.ts"

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

/** The reason of `status`: any 5xx is `unavailable` (worth waiting out), an unknown 4xx or none `unknown`. */
export const reasonOfStatus = (status: number | undefined): ProviderReason =>
  status === undefined ? "unknown" : BY_STATUS[status] ?? (status >= 500 ? "unavailable" : "unknown")
