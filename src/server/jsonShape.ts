/**
 * A linear scan of a JSON body's bytes, before `JSON.parse` sees them: the parser's
 * cost is in its values, not its bytes (a 64 MiB body of `[],[],...` took 9 s and
 * 1 GB; deep nesting takes the stack), so both the nesting depth and the number of
 * objects and arrays are bounded first. The scan only tracks strings (so brackets
 * inside them do not count) and is about 3 ms per MiB; it does not validate: the
 * parser still does.
 */
const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d

export interface JsonShapeLimits {
  readonly depth: number
  readonly containers: number
}

/** Why `bytes` is too deep or has too many containers, or undefined when it is within `limits`. */
export const jsonShapeProblem = (bytes: Uint8Array, limits: JsonShapeLimits): string | undefined => {
  let depth = 0
  let containers = 0
  let inString = false
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]
    if (inString) {
      if (byte === BACKSLASH) i++
      else if (byte === QUOTE) inString = false
    } else if (byte === QUOTE) {
      inString = true
    } else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      if (++depth > limits.depth) return `The JSON body is nested deeper than the limit of ${limits.depth} levels.`
      if (++containers > limits.containers) {
        return `The JSON body has more objects and arrays than the limit of ${limits.containers}.`
      }
    } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) {
      depth--
    }
  }
  return undefined
}
