/**
 * Secret values (given to `addEnvVars` as `Redacted`) must never reach an agent
 * or a log. The executor masks a command's output before it is cut to the
 * 30,000-character view (so no secret is split by the cut), and masks every
 * string of every observation it answers; the runtime wrapper masks again,
 * observations and typed errors alike, as defence in depth and for servers that
 * do not mask (OpenHands'): there a secret may be cut by a truncation marker,
 * so a secret's prefix right before a marker and its suffix right after one
 * are masked too.
 */
import { Redacted, Schema } from "effect"
import { TRUNCATION_NOTICE_PATTERN } from "./cmdOutput.ts"
import { InvalidEnvVarError } from "./errors.ts"

export const MASK = "<redacted>"

/**
 * The shortest secret value accepted: masking a one-letter secret would replace every
 * occurrence of that letter in all output (and a 2-3 character one most words containing it).
 */
export const MIN_SECRET_LENGTH = 4

/**
 * The typed error refusing the `secrets` (names in `vars`) whose values are too short to mask
 * safely, naming the variables, never their values; undefined when all are long enough.
 */
export const shortSecretsError = (
  vars: Readonly<Record<string, string>>,
  secrets: ReadonlyArray<string>
): InvalidEnvVarError | undefined => {
  const names = secrets.filter((name) => (vars[name] ?? "").length < MIN_SECRET_LENGTH)
  return names.length === 0 ? undefined : new InvalidEnvVarError({
    names,
    message: `Secrets too short to mask safely: ${names.join(", ")} (at least ${MIN_SECRET_LENGTH} characters;`
      + " masking a shorter value would hide those characters everywhere in the output). Nothing was set."
  })
}

/** What is placed where output was cut: command output's notices, and the editor's clipped view (`format.ts`). */
const CUT_MARKERS = new RegExp(`${TRUNCATION_NOTICE_PATTERN.source}|<response clipped>`, "g")

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** The field names of a Schema class instance (observations, metadata, typed errors), or of a plain object. */
const fieldsOf = (value: object): ReadonlyArray<string> | undefined => {
  const proto = Object.getPrototypeOf(value)
  if (proto === Object.prototype || proto === null) return Object.keys(value)
  const Class = value.constructor as { readonly fields?: object } | undefined
  return Class !== undefined && Schema.isSchema(Class) && typeof Class.fields === "object"
    ? Object.keys(Class.fields).filter((key) => key !== "_tag")
    : undefined
}

/** An output listener that masks secrets across chunk boundaries (`SecretMask.stream`). */
export interface MaskedListener {
  (text: string): void
  /** The output ended: hand on the held-back end. */
  readonly flush: () => void
}

export class SecretMask {
  /** Longest first, so a secret that contains another is masked whole. */
  private secrets: Array<string> = []
  /** One pass over a text for all secrets (a second pass could mask inside `<redacted>`). */
  private pattern: RegExp | null = null

  add(value: string): void {
    if (value.length === 0 || this.secrets.includes(value)) return
    this.secrets = [...this.secrets, value].sort((a, b) => b.length - a.length)
    this.pattern = new RegExp(this.secrets.map(escapeRegExp).join("|"), "g")
  }

  /** The text with every secret, and every secret fragment next to a truncation marker, masked. */
  text(text: string): string {
    if (this.pattern === null) return text
    // Fragments first: a whole shorter secret inside a cut longer one would otherwise hide the cut one.
    return this.fragments(text).replace(this.pattern, MASK)
  }

  /**
   * `value` with every string anywhere inside it masked (Schema classes such as
   * observations and typed errors, arrays, plain objects and their keys);
   * the same object when nothing changes. Free when no secret was added.
   */
  deep<A>(value: A): A {
    return this.pattern === null ? value : this.walk(value) as A
  }

  /**
   * A listener of output chunks that hands `listener` them masked. A chunk's end that may begin a
   * secret is held back until the next chunk shows whether it does; `flush` (the output ended)
   * hands on what is held back, which the observation shows as well since no secret completed it.
   */
  stream(listener: (text: string) => void): MaskedListener {
    let pending = ""
    const push = (chunk: string) => {
      const all = pending + chunk
      const hold = this.unfinished(all)
      pending = all.slice(all.length - hold)
      const ready = this.text(all.slice(0, all.length - hold))
      if (ready.length > 0) listener(ready)
    }
    const flush = () => {
      const rest = pending
      pending = ""
      if (rest.length > 0) listener(this.text(rest))
    }
    return Object.assign(push, { flush })
  }

  /**
   * How many characters at the end of `text` may begin a secret (0 when none can): output shown
   * in parts holds them back until the next part shows whether the secret follows.
   */
  unfinished(text: string): number {
    return this.longest((secret, k) => text.endsWith(secret.slice(0, k)))
  }

  private walk(value: unknown): unknown {
    if (typeof value === "string") return this.text(value)
    if (typeof value !== "object" || value === null || Redacted.isRedacted(value)) return value
    if (Array.isArray(value)) {
      const masked = value.map((item) => this.walk(item))
      return masked.some((item, i) => item !== value[i]) ? masked : value
    }
    const fields = fieldsOf(value)
    if (fields === undefined) return value
    const record = value as Record<string, unknown>
    const plain = Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null
    let changed = false
    const masked: Record<string, unknown> = {}
    for (const key of fields) {
      const name = plain ? this.text(key) : key
      const item = this.walk(record[key])
      if (name !== key || item !== record[key]) changed = true
      masked[name] = item
    }
    if (!changed) return value
    if (plain) return masked
    const Class = value.constructor as new(fields: Record<string, unknown>) => unknown
    return new Class(masked)
  }

  /** Mask a secret's prefix ending at a cut marker and a secret's suffix starting after one. */
  private fragments(text: string): string {
    let result = text
    const markers = new RegExp(CUT_MARKERS)
    let found = markers.exec(result)
    while (found !== null) {
      const marker = found[0]
      const before = result.slice(0, found.index)
      const after = result.slice(found.index + marker.length)
      const head = this.longest((s, k) => before.endsWith(s.slice(0, k)))
      const tail = this.longest((s, k) => after.startsWith(s.slice(s.length - k)))
      const kept = before.slice(0, before.length - head) + (head > 0 ? MASK : "") + marker
      result = kept + (tail > 0 ? MASK : "") + after.slice(tail)
      markers.lastIndex = kept.length
      found = markers.exec(result)
    }
    return result
  }

  /** The longest proper part (1 to length - 1 characters) of any secret that `matches`; 0 if none. */
  private longest(matches: (secret: string, length: number) => boolean): number {
    let best = 0
    for (const secret of this.secrets) {
      for (let k = secret.length - 1; k > best; k--) {
        if (matches(secret, k)) {
          best = k
          break
        }
      }
    }
    return best
  }
}
