/**
 * What a failed `modal` SDK call means (services/Driver.ts `Classified`). Modal speaks gRPC: a
 * refusal is nice-grpc's ClientError with a numeric `code` (its `details` are Modal's own text; its
 * message repeats the method path), which maps to a reason and to the HTTP status gRPC's mapping
 * gives it; some calls rethrow it as one of the SDK's classes, read by name (structurally, so the
 * SDK's types stay out of ours). A registry image Modal could not build is a plain Error.
 */
import type { ProviderReason } from "../../schema/errors.ts"
import type { Classified } from "../../services/Driver.ts"

/** gRPC status code → the reason and the HTTP status of gRPC's own mapping. */
const BY_CODE: Readonly<Record<number, readonly [ProviderReason, number]>> = {
  3: ["invalid", 400], // INVALID_ARGUMENT
  4: ["timeout", 504], // DEADLINE_EXCEEDED
  5: ["not-found", 404], // NOT_FOUND
  6: ["conflict", 409], // ALREADY_EXISTS
  7: ["forbidden", 403], // PERMISSION_DENIED
  8: ["rate-limited", 429], // RESOURCE_EXHAUSTED: sandbox creations per minute, concurrent sandboxes
  9: ["invalid", 400], // FAILED_PRECONDITION
  10: ["conflict", 409], // ABORTED
  13: ["unknown", 500], // INTERNAL
  14: ["unavailable", 503], // UNAVAILABLE
  16: ["unauthorized", 401] // UNAUTHENTICATED
}

const BY_NAME: Readonly<Record<string, ProviderReason>> = {
  NotFoundError: "not-found",
  AlreadyExistsError: "conflict",
  ConflictError: "conflict",
  InvalidError: "invalid",
  ResourceExhaustedError: "rate-limited",
  TimeoutError: "timeout",
  SandboxTimeoutError: "timeout"
}

/** What the classifier reads of an SDK error. */
type SdkError = { readonly name?: string; readonly code?: number; readonly details?: string; readonly message?: string }

export const classifyModal = (cause: unknown): Classified => {
  const error = (typeof cause === "object" && cause !== null ? cause : { message: String(cause) }) as SdkError
  const text = typeof error.details === "string" && error.details !== "" ? error.details : String(error.message)
  const byCode = typeof error.code === "number" ? BY_CODE[error.code] : undefined
  const reason = byCode?.[0] ?? BY_NAME[error.name ?? ""] ??
    (text.startsWith("Image build for ") ? "image-missing" : "unknown")
  return { reason, status: byCode?.[1], text }
}
