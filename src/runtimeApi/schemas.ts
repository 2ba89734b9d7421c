/**
 * The request bodies and queries of the runtime API (spec §14), as Schemas: every request is
 * decoded before anything is done, and a bad one is a 400 whose `detail` names each bad field
 * (schema/issues.ts `formatIssue`), never a half-started sandbox.
 */
import { Schema } from "effect"

/**
 * A session id names the sandbox's container (`effect-sandbox-api-<sid>`) and appears in paths
 * (`/sessions/{sid}`): what Docker accepts in a name and the request gate in a path (lower case,
 * server/requestTarget.ts), bounded. OpenHands' ids (`uuid4().hex`) are of this form.
 */
export const SessionId = Schema.String.check(
  Schema.isPattern(/^[a-z0-9][a-z0-9_.-]{0,127}$/, {
    message: "a session id is 1-128 lower-case letters, digits, '_', '.' or '-', starting with a letter or digit"
  })
)

/** Runtime ids are ours (`rt-` and 24 hex digits): anything else names no sandbox. */
export const RUNTIME_ID_PATTERN = /^rt-[0-9a-f]{24}$/
export const RuntimeId = Schema.String.check(
  Schema.isPattern(RUNTIME_ID_PATTERN, { message: "a runtime id is 'rt-' followed by 24 hexadecimal digits" })
)

/** The largest `resource_factor`: beyond it a sandbox could claim a host's memory many times over. */
export const MAX_RESOURCE_FACTOR = 16

const ENVIRONMENT_NAME = /^[A-Za-z_.-][A-Za-z0-9_.-]*$/

/**
 * `environment` with names as a pod takes them (letters, digits, `_`, `-`, `.`, not starting with a
 * digit), so every backend accepts the same names (Docker would turn `A=B` into another variable
 * and answers an empty name with an error that quotes the value), and values without a NUL byte
 * (which no process environment holds; the engine's refusal would quote it too). A bad entry is
 * named by its key, never its value. A checked record, not a key schema: a record drops the keys
 * its key schema refuses instead of failing.
 */
const Environment = Schema.Record(Schema.String, Schema.String).check(
  Schema.makeFilter((environment) =>
    Object.entries(environment).flatMap(([name, value]) => [
      ...(ENVIRONMENT_NAME.test(name) ? [] : [
        `the name ${JSON.stringify(name)} is not letters, digits, '_', '-' or '.' (not starting with a digit)`
      ]),
      ...(value.includes("\0") ? [{ path: [name], issue: "a value holds no NUL byte" }] : [])
    ])
  )
)

/** `POST /start`: OpenHands' body; `image` and `command` may be omitted (our runtime image and server). */
export const StartRequest = Schema.Struct({
  session_id: SessionId,
  image: Schema.optionalKey(Schema.NonEmptyString),
  command: Schema.optionalKey(Schema.Array(Schema.String).check(Schema.isMinLength(1))),
  working_dir: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^\//, { message: "an absolute path" }))),
  environment: Schema.optionalKey(Environment),
  resource_factor: Schema.optionalKey(
    Schema.Number.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(MAX_RESOURCE_FACTOR))
  ),
  /** OpenHands sends `sysbox-runc` (or nothing); `gvisor` names gVisor's `runsc`. */
  runtime_class: Schema.optionalKey(Schema.NullOr(Schema.Literals(["sysbox-runc", "sysbox", "gvisor"])))
})
export type StartRequest = typeof StartRequest.Type

/** `POST /pause`, `/resume`, `/stop`. */
export const RuntimeRequest = Schema.Struct({ runtime_id: RuntimeId })

/** An image reference as the engine takes it (`repo[:tag]`, a registry host first when any). */
const ImageReference = Schema.String.check(
  Schema.isPattern(/^[a-z0-9][a-z0-9._/:-]{0,254}(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?$/, {
    message: "an image reference such as repo/name:tag"
  })
)

/** `GET /image_exists?image=`. */
export const ImageQuery = Schema.Struct({ image: ImageReference })

/** `GET /build_status?build_id=`. */
export const BuildQuery = Schema.Struct({ build_id: Schema.NonEmptyString })

/** `POST /build`'s form fields beside the context: the image to build and its other tags. */
export const BuildForm = Schema.Struct({
  target_image: ImageReference,
  tags: Schema.Array(ImageReference)
})
