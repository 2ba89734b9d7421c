/**
 * PATCH bodies as kube-apiserver applies them: JSON Patch (RFC 6902, the
 * default content type of @kubernetes/client-node's patch calls) and JSON Merge
 * Patch (RFC 7386). A strategic merge patch is applied as a merge patch, which
 * is the same for the maps (labels, annotations, spec fields) the runtime patches.
 */
import { ApiError, badRequest } from "./status.ts"

type Json = unknown

const isObject = (value: Json): value is Record<string, Json> =>
  value !== null && typeof value === "object" && !Array.isArray(value)

const mergePatch = (target: Json, patch: Json): Json => {
  if (!isObject(patch)) return patch
  const result: Record<string, Json> = isObject(target) ? { ...target } : {}
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key]
    else result[key] = mergePatch(result[key], value)
  }
  return result
}

interface Operation {
  readonly op: string
  readonly path: string
  readonly value?: Json
}

const pointer = (path: string) => path.split("/").slice(1).map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))

const applyOperation = (document: Json, operation: Operation): Json => {
  const keys = pointer(operation.path)
  const root = structuredClone(document)
  const last = keys.pop()
  const parent = keys.reduce<Json>(
    (at, key) => (isObject(at) || Array.isArray(at) ? (at as any)[key] : undefined),
    root
  )
  if (last === undefined) return operation.value
  if (!isObject(parent) && !Array.isArray(parent)) {
    throw new ApiError(
      422,
      "Invalid",
      `the server rejected our request due to an error in our request: doc is missing path: "${operation.path}"`
    )
  }
  const container = parent as Record<string, Json>
  switch (operation.op) {
    case "add":
      if (Array.isArray(parent)) parent.splice(last === "-" ? parent.length : Number(last), 0, operation.value)
      else container[last] = operation.value
      return root
    case "replace":
      container[last] = operation.value
      return root
    case "remove":
      if (Array.isArray(parent)) parent.splice(Number(last), 1)
      else delete container[last]
      return root
    case "test":
      if (JSON.stringify(container[last]) !== JSON.stringify(operation.value)) {
        throw new ApiError(422, "Invalid", `the server rejected our request: testing value ${operation.path} failed`)
      }
      return root
    default:
      throw badRequest(
        `the server rejected our request due to an error in our request: unsupported operation "${operation.op}"`
      )
  }
}

/** Apply a PATCH body of `contentType` to `document`. */
export const applyPatch = (document: Json, contentType: string, body: Json): Json => {
  if (contentType.startsWith("application/json-patch+json")) {
    if (!Array.isArray(body)) throw badRequest("json patch body must be an array of operations")
    return (body as Array<Operation>).reduce(applyOperation, document)
  }
  if (
    contentType.startsWith("application/merge-patch+json")
    || contentType.startsWith("application/strategic-merge-patch+json")
  ) return mergePatch(document, body)
  throw new ApiError(
    415,
    "UnsupportedMediaType",
    `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json`
  )
}
