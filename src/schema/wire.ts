/**
 * The OpenHands wire codec (spec §1): actions as `{action, args, timeout?, message}`
 * and observations as `{observation, content, extras, success?, message}`, with
 * snake_case keys. Field names map mechanically (`isInput` ⇄ `is_input`), so the
 * classes in `Action.ts` / `Observation.ts` are the single description of each type.
 */
import { Effect, Schema } from "effect"
import * as A from "./Action.ts"
import { truncateCmdOutput } from "./cmdOutput.ts"
import { WireDecodeError } from "./errors.ts"
import { formatIssue } from "./issues.ts"
import * as O from "./Observation.ts"

type JsonRecord = Record<string, unknown>

const actionClasses = {
  run: A.CmdRunAction,
  run_ipython: A.IPythonRunCellAction,
  read: A.FileReadAction,
  write: A.FileWriteAction,
  edit: A.FileEditAction,
  browse: A.BrowseURLAction,
  browse_interactive: A.BrowseInteractiveAction,
  call_tool_mcp: A.McpCallAction
} as const

const observationClasses = {
  run: O.CmdOutputObservation,
  run_ipython: O.IPythonRunCellObservation,
  read: O.FileReadObservation,
  write: O.FileWriteObservation,
  edit: O.FileEditObservation,
  error: O.ErrorObservation,
  browse: O.BrowserOutputObservation,
  mcp: O.McpObservation,
  download: O.FileDownloadObservation
} as const

export type ActionWireType = keyof typeof actionClasses
export type ObservationWireType = keyof typeof observationClasses

const wireTypeOf = <T extends JsonRecord>(table: T) => {
  const byTag = new Map(Object.entries(table).map(([wire, cls]) => [(cls as { identifier: string }).identifier, wire]))
  return (tag: string) => byTag.get(tag)!
}

/** `CmdRunAction` → `"run"`: the OpenHands `action` string of an action. */
export const actionWireType: (action: A.Action) => ActionWireType = (action) => actionTagToWire(action._tag)
/** The same, from the action's tag alone. */
export const actionTagToWire = wireTypeOf(actionClasses) as (tag: A.Action["_tag"]) => ActionWireType

/** `CmdOutputObservation` → `"run"`: the OpenHands `observation` string. */
export const observationWireType: (observation: O.Observation) => ObservationWireType = (observation) =>
  observationTagToWire(observation._tag) as ObservationWireType
const observationTagToWire = wireTypeOf(observationClasses)

/**
 * A renaming of keys that remembers its answers: every request and response renames the same few
 * dozen field names, and the regular expression was half of what renaming a body cost. Bounded
 * (in count and in key length), because the keys of an action's args are the client's to choose.
 */
const remembered = (rename: (key: string) => string) => {
  const known = new Map<string, string>()
  return (key: string): string => {
    let renamed = known.get(key)
    if (renamed === undefined) {
      renamed = rename(key)
      if (known.size < 1024 && key.length <= 64) known.set(key, renamed)
    }
    return renamed
  }
}

const toSnake = remembered((key) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`))
const toCamel = remembered((key) => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()))

/** Only these fields hold objects whose own keys are renamed; others (MCP arguments, DOM) pass through. */
const nestedModels: ReadonlySet<string> = new Set(["metadata"])

const renameKeys = (record: JsonRecord, rename: (key: string) => string): JsonRecord =>
  Object.fromEntries(
    Object.entries(record).map(([key, value]) => [
      rename(key),
      nestedModels.has(toCamel(key)) && isRecord(value) ? renameKeys(value, rename) : value
    ])
  )

/** A JSON object (not null, not an array). */
export const isRecord = (u: unknown): u is JsonRecord => typeof u === "object" && u !== null && !Array.isArray(u)

/** Each class's encoder and decoder, made once (making them anew cost a few µs of every request). */
const codecs = new Map<Schema.Top, {
  readonly encode: (value: unknown) => JsonRecord
  readonly decode: (input: unknown) => Effect.Effect<unknown, Schema.SchemaError>
}>()
const codecOf = (cls: Schema.Top) => {
  let codec = codecs.get(cls)
  if (codec === undefined) {
    const decode = Schema.decodeUnknownEffect(cls as Schema.Codec<unknown>)
    codec = {
      encode: Schema.encodeUnknownSync(cls as Schema.Codec<unknown, JsonRecord>),
      decode: (input) => decode(input, { errors: "all" })
    }
    codecs.set(cls, codec)
  }
  return codec
}

const encodeFields = (cls: Schema.Top, value: unknown): JsonRecord => {
  const { _tag: _, ...fields } = codecOf(cls).encode(value)
  return renameKeys(fields, toSnake)
}

/** Encode an action as OpenHands JSON. */
export const encodeAction = (action: A.Action): JsonRecord => {
  const type = actionWireType(action)
  const { timeout, ...args } = encodeFields(actionClasses[type], action)
  return {
    message: action.message,
    action: type,
    args,
    ...(timeout === undefined ? {} : { timeout })
  }
}

/** Encode an observation as OpenHands JSON. */
export const encodeObservation = (observation: O.Observation): JsonRecord => {
  const type = observationWireType(observation)
  const { content, ...extras } = encodeFields(observationClasses[type], observation)
  // OpenHands leaks the private `_diff_cache` of FileEditObservation into extras.
  if (type === "edit") extras["_diff_cache"] = null
  return {
    message: observation.message,
    observation: type,
    content,
    extras,
    ...("success" in observation ? { success: observation.success } : {})
  }
}

/**
 * Is the agent-supplied `type` one of `table`'s own keys? (`in` would also accept the names
 * every object inherits, `__proto__`, `toString`, `constructor`, ..., and then crash.)
 */
const isWireType = <T extends JsonRecord>(table: T, type: string): type is Extract<keyof T, string> =>
  Object.hasOwn(table, type)

const fail = (message: string) => Effect.fail(new WireDecodeError({ message }))

const decodeInto = <C extends Schema.Top>(cls: C, kind: string, type: string, fields: JsonRecord) => {
  const known = (cls as unknown as { fields: JsonRecord }).fields
  // Unknown keys are ignored so newer OpenHands clients that add fields keep working.
  const input = Object.fromEntries(Object.entries(fields).filter(([k]) => Object.hasOwn(known, k)))
  return (codecOf(cls).decode({
    ...input,
    _tag: (cls as unknown as { identifier: string }).identifier
  }) as Effect.Effect<C["Type"], Schema.SchemaError>).pipe(
    Effect.mapError((e) =>
      new WireDecodeError({
        // One line, fields named as the client sent them (`is_input`, not `isInput`).
        message: `Invalid ${kind} "${type}": ${formatIssue(e.issue, toSnake)}`
      })
    )
  )
}

/** Legacy arg names OpenHands still accepts (spec §1.1). */
const legacyActionArgs = (args: JsonRecord): JsonRecord => {
  const { timestamp: _t, keep_prompt: _k, task_completed: _c, is_confirmed, images_urls, ...rest } = args
  return {
    ...(is_confirmed === undefined ? {} : { confirmation_state: is_confirmed }),
    ...(images_urls === undefined ? {} : { image_urls: images_urls }),
    ...rest
  }
}

/** Decode OpenHands action JSON (already parsed) into an `Action`. */
export const decodeAction = (json: unknown): Effect.Effect<A.Action, WireDecodeError> => {
  if (!isRecord(json)) return fail("An action must be a JSON object with an \"action\" field.")
  const type = json["action"]
  if (typeof type !== "string") return fail("The action has no \"action\" type string.")
  if (!isWireType(actionClasses, type)) {
    return fail(`Unknown action type "${type}". Known types: ${Object.keys(actionClasses).join(", ")}.`)
  }
  const args = json["args"] ?? {}
  if (!isRecord(args)) return fail(`The "args" of action "${type}" must be a JSON object.`)
  const fields = renameKeys(legacyActionArgs(args), toCamel)
  if (json["timeout"] !== undefined && json["timeout"] !== null) fields["timeout"] = json["timeout"]
  return decodeInto(actionClasses[type], "action", type, fields) as Effect.Effect<
    A.Action,
    WireDecodeError
  >
}

/** Legacy extras OpenHands folds into `metadata` (spec §1.2). */
const legacyObservationExtras = (type: string, extras: JsonRecord): JsonRecord => {
  const { _diff_cache: _d, formatted_output_and_error: _f, exit_code, command_id, ...rest } = extras
  if (type !== "run" || (exit_code === undefined && command_id === undefined)) return rest
  const metadata = isRecord(rest["metadata"]) ? rest["metadata"] : {}
  return {
    ...rest,
    metadata: {
      ...metadata,
      ...(exit_code === undefined ? {} : { exit_code }),
      ...(command_id === undefined ? {} : { pid: command_id })
    }
  }
}

/** Decode OpenHands observation JSON (already parsed) into an `Observation`. */
export const decodeObservation = (json: unknown): Effect.Effect<O.Observation, WireDecodeError> => {
  if (!isRecord(json)) return fail("An observation must be a JSON object with an \"observation\" field.")
  const type = json["observation"]
  if (typeof type !== "string") return fail("The observation has no \"observation\" type string.")
  if (!isWireType(observationClasses, type)) {
    return fail(`Unsupported observation type "${type}". Known types: ${Object.keys(observationClasses).join(", ")}.`)
  }
  const extras = json["extras"] ?? {}
  if (!isRecord(extras)) return fail(`The "extras" of observation "${type}" must be a JSON object.`)
  const fields = renameKeys(legacyObservationExtras(type, extras), toCamel)
  const content = json["content"] ?? ""
  // Like OpenHands' constructor, decoding re-applies command-output truncation (idempotent).
  fields["content"] = type === "run" && typeof content === "string" && fields["hidden"] !== true
    ? truncateCmdOutput(content)
    : content
  return decodeInto(observationClasses[type], "observation", type, fields) as Effect.Effect<
    O.Observation,
    WireDecodeError
  >
}
