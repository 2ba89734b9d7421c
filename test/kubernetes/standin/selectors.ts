/**
 * Label and field selectors as kube-apiserver parses them (`a=b,c!=d,e,!f,
 * g in (h,i),j notin (k)`; field selectors `path=value`/`path!=value` on dotted
 * paths such as `metadata.name` or `involvedObject.name`).
 */
import { badRequest } from "./status.ts"

type Test = (get: (key: string) => string | undefined) => boolean

/** Split on the commas that are not inside `( )`. */
const terms = (selector: string): Array<string> => {
  const out: Array<string> = []
  let depth = 0
  let current = ""
  for (const char of selector) {
    if (char === "(") depth++
    if (char === ")") depth--
    if (char === "," && depth === 0) {
      out.push(current.trim())
      current = ""
    } else current += char
  }
  if (current.trim() !== "") out.push(current.trim())
  return out
}

const parseTerm = (term: string, setsAllowed: boolean): Test => {
  const set = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term)
  if (set !== null && setsAllowed) {
    const values = set[3]!.split(",").map((value) => value.trim())
    const key = set[1]!
    return set[2] === "in"
      ? (get) => values.includes(get(key) ?? "\0")
      : (get) => !values.includes(get(key) ?? "\0")
  }
  const equality = /^([^!=\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(term)
  if (equality !== null) {
    const [, key, op, value] = equality
    return op === "!=" ? (get) => get(key!) !== value : (get) => get(key!) === value
  }
  if (setsAllowed && /^!?[\w./-]+$/.test(term)) {
    const key = term.replace(/^!/, "")
    return term.startsWith("!") ? (get) => get(key) === undefined : (get) => get(key) !== undefined
  }
  throw badRequest(`unable to parse requirement: invalid selector term "${term}"`)
}

const compile = (selector: string | null | undefined, setsAllowed: boolean): Array<Test> =>
  selector === null || selector === undefined ? [] : terms(selector).map((term) => parseTerm(term, setsAllowed))

/** A predicate on an object from `labelSelector` and `fieldSelector` (a bad one is a 400). */
export const matcher = (labelSelector: string | null, fieldSelector: string | null) => {
  const labels = compile(labelSelector, true)
  const fields = compile(fieldSelector, false)
  return (object: { readonly metadata: { readonly labels?: Record<string, string> | undefined } }): boolean => {
    const labelOf = (key: string) => object.metadata.labels?.[key]
    const fieldOf = (path: string) => {
      const value = path.split(".").reduce<unknown>(
        (at, key) => (at !== null && typeof at === "object" ? (at as Record<string, unknown>)[key] : undefined),
        object
      )
      return value === undefined ? undefined : String(value)
    }
    return labels.every((test) => test(labelOf)) && fields.every((test) => test(fieldOf))
  }
}
