/**
 * BrowserGym's high-level action set: each action's parameters with their
 * types and defaults, and the binding of a parsed call to them (positional and
 * keyword arguments, as Python would). A call that does not fit its signature
 * is refused before anything runs, with a message in Python's own terms.
 */
import type { Literal, ParsedCall } from "./actionParser.ts"

type ParamType = "string" | "number" | "strings"

interface Param {
  readonly name: string
  readonly type: ParamType
  /** Absent: required. */
  readonly default?: Literal
}

const parameter = (name: string, type: ParamType, fallback: Literal | undefined): Param =>
  fallback === undefined ? { name, type } : { name, type, default: fallback }
const str = (name: string, fallback?: string) => parameter(name, "string", fallback)
const num = (name: string, fallback?: number) => parameter(name, "number", fallback)
const strs = (name: string, fallback?: ReadonlyArray<string>) => parameter(name, "strings", fallback)

/** The actions and their parameters, in BrowserGym's order. */
export const ACTION_SIGNATURES = {
  goto: [str("url")],
  go_back: [],
  go_forward: [],
  noop: [num("wait_ms", 1000)],
  click: [str("bid"), str("button", "left"), strs("modifiers", [])],
  dblclick: [str("bid"), str("button", "left"), strs("modifiers", [])],
  hover: [str("bid")],
  fill: [str("bid"), str("value")],
  select_option: [str("bid"), strs("options")],
  press: [str("bid"), str("key_comb")],
  focus: [str("bid")],
  clear: [str("bid")],
  drag_and_drop: [str("from_bid"), str("to_bid")],
  scroll: [num("delta_x"), num("delta_y")],
  upload_file: [str("bid"), strs("file")],
  new_tab: [],
  tab_close: [],
  tab_focus: [num("index")],
  send_msg_to_user: [str("text")],
  report_infeasible: [str("reason")]
} as const satisfies Record<string, ReadonlyArray<Param>>

export type ActionName = keyof typeof ACTION_SIGNATURES

/** A call bound to its signature: every parameter has a value of its type. */
export interface BoundAction {
  readonly name: ActionName
  readonly params: Readonly<Record<string, string | number | ReadonlyArray<string>>>
  readonly source: string
}

/** Why a call does not fit its action. */
export class ActionArgumentError extends Error {}

const typeName: Record<ParamType, string> = {
  string: "a string",
  number: "a number",
  strings: "a string or a list of strings"
}

const coerce = (action: string, param: Param, value: Literal): string | number | ReadonlyArray<string> => {
  switch (param.type) {
    case "string":
      // BrowserGym's bids are strings, but agents often write click(12).
      if (typeof value === "string") return value
      if (param.name.endsWith("bid") && typeof value === "number" && Number.isInteger(value)) return String(value)
      break
    case "number":
      if (typeof value === "number") return value
      break
    case "strings":
      if (typeof value === "string") return [value]
      if (Array.isArray(value) && value.every((item) => typeof item === "string")) return value as ReadonlyArray<string>
      break
  }
  throw new ActionArgumentError(
    `TypeError: ${action}() argument '${param.name}' must be ${typeName[param.type]}, not ${JSON.stringify(value)}`
  )
}

const isAction = (name: string): name is ActionName => Object.hasOwn(ACTION_SIGNATURES, name)

/** Binds a parsed call to its action's signature, or throws an ActionArgumentError. */
export const bindAction = (call: ParsedCall): BoundAction => {
  const name = call.name
  if (!isAction(name)) {
    throw new ActionArgumentError(
      `NameError: '${name}' is not a browser action; the actions are ${Object.keys(ACTION_SIGNATURES).join(", ")}`
    )
  }
  const signature: ReadonlyArray<Param> = ACTION_SIGNATURES[name]
  if (call.args.length > signature.length) {
    throw new ActionArgumentError(
      `TypeError: ${name}() takes ${signature.length} positional arguments but ${call.args.length} were given`
    )
  }
  for (const key of Object.keys(call.kwargs)) {
    if (!signature.some((param) => param.name === key)) {
      throw new ActionArgumentError(`TypeError: ${name}() got an unexpected keyword argument '${key}'`)
    }
  }
  const params: Record<string, string | number | ReadonlyArray<string>> = {}
  signature.forEach((param, index) => {
    const given = index < call.args.length
    if (given && param.name in call.kwargs) {
      throw new ActionArgumentError(`TypeError: ${name}() got multiple values for argument '${param.name}'`)
    }
    const value = given ? call.args[index]! : call.kwargs[param.name] ?? param.default
    if (value === undefined) {
      throw new ActionArgumentError(`TypeError: ${name}() missing required argument: '${param.name}'`)
    }
    params[param.name] = coerce(name, param, value)
  })
  return { name, params, source: call.source }
}
