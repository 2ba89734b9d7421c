/**
 * Kubernetes `Status` objects: every failed request of the stand-in answers
 * with one (`kind: Status`, reason and code), as kube-apiserver does, because
 * @kubernetes/client-node and the runtime branch on `reason`/`code`.
 */

/** A failed API request; `body` is the Status object the server sends. */
export class ApiError extends Error {
  readonly code: number
  readonly reason: string
  readonly details: Record<string, unknown> | undefined
  constructor(code: number, reason: string, message: string, details?: Record<string, unknown>) {
    super(message)
    this.code = code
    this.reason = reason
    this.details = details
  }

  get body() {
    return {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: this.message,
      reason: this.reason,
      ...(this.details === undefined ? {} : { details: this.details }),
      code: this.code
    }
  }
}

export const notFound = (plural: string, name: string) =>
  new ApiError(404, "NotFound", `${plural} "${name}" not found`, { name, kind: plural })

export const alreadyExists = (plural: string, name: string) =>
  new ApiError(409, "AlreadyExists", `${plural} "${name}" already exists`, { name, kind: plural })

export const conflict = (plural: string, name: string) =>
  new ApiError(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${plural} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    { name, kind: plural }
  )

/** 422 Invalid, named as kube-apiserver names it: `Pod "x" is invalid: field: message`. */
export const invalid = (kind: string, name: string, field: string, message: string) =>
  new ApiError(422, "Invalid", `${kind} "${name}" is invalid: ${field}: ${message}`, {
    name,
    kind,
    causes: [{ reason: "FieldValueInvalid", message, field }]
  })

export const badRequest = (message: string) => new ApiError(400, "BadRequest", message)

/** The Status a successful DELETE of a custom resource answers with. */
export const success = (details: Record<string, unknown>) => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Success",
  details
})

/** The reasons kube-apiserver gives its error codes (a fault's status is answered with its reason). */
const REASONS: Readonly<Record<number, string>> = {
  429: "TooManyRequests",
  500: "InternalError",
  502: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout"
}

/** The Status body of an injected error status (test/providers/faults.ts `applyHttpFault`). */
export const statusBody = (code: number, message: string) =>
  new ApiError(code, REASONS[code] ?? "InternalError", message).body
