/**
 * The bounds one request or transfer may use, in one place. Each exists because a
 * single hostile or careless request could otherwise take the whole server down
 * (memory, event loop, disk): the values are generous for an agent's real work and
 * small enough that the worst case stays cheap. The action server takes them from
 * the environment (`limitsFromEnv`); in process they can be provided as `Limits`.
 */
import { Context } from "effect"

const MiB = 1024 * 1024
const GiB = 1024 * MiB

export interface TransferLimits {
  /**
   * A JSON request body (an action, env vars, a listing), in bytes: read no further.
   * A `write` carries a whole file, so it is large; a 64 MiB body of tiny arrays
   * took 9 s and 1 GB to parse, a 32 MiB one of one string 60 ms. Big files go by upload.
   */
  readonly jsonBodyBytes: number
  /** Nesting of a JSON body: actions are a few levels deep; deeper is an attack on the parser. */
  readonly jsonDepth: number
  /**
   * Objects and arrays in a JSON body: each costs the parser ~50 bytes and time, so a
   * body of `[],[],...` is bounded by this, not by its size. Real actions hold a handful.
   */
  readonly jsonContainers: number
  /** A multipart upload (`/upload_file`), in bytes: a repository archive fits, a disk does not. */
  readonly uploadBytes: number
  /** Entries of a zip, extracted or made: each is a file to create or read (metadata, inodes). */
  readonly zipEntries: number
  /** What an uploaded zip may expand to on disk, in bytes (its declared sizes, checked while inflating). */
  readonly zipExpandedBytes: number
  /**
   * Expanded size over archive size, above `ZIP_RATIO_FLOOR_BYTES`: source trees compress
   * 3-10x, a zip bomb 1,000x and more.
   */
  readonly zipRatio: number
  /** The files a download zips (their sizes summed), in bytes: `/download_files?path=/` is refused. */
  readonly downloadBytes: number
  /**
   * Background processes (`Runtime.spawn`) a session holds at once, running or exited but not yet
   * released: each is a process tree and an output buffer, so an agent looping on spawn stops here.
   */
  readonly processes: number
  /** Output a background process keeps for replay, in bytes (the oldest goes first): its memory bound. */
  readonly processOutputBytes: number
}

/** Below this expanded size no ratio is refused: a small archive of zeros harms nobody. */
export const ZIP_RATIO_FLOOR_BYTES = 64 * MiB

export const DEFAULT_LIMITS: TransferLimits = {
  jsonBodyBytes: 32 * MiB,
  jsonDepth: 128,
  jsonContainers: 100_000,
  uploadBytes: 2 * GiB,
  zipEntries: 100_000,
  zipExpandedBytes: 8 * GiB,
  zipRatio: 100,
  downloadBytes: 2 * GiB,
  processes: 16,
  processOutputBytes: 1 * MiB
}

/** The limits in force: `DEFAULT_LIMITS` unless a server or caller provides others. */
export class Limits extends Context.Reference<TransferLimits>("effect-sandbox/Limits", {
  defaultValue: () => DEFAULT_LIMITS
}) {}

/** The environment variable that sets each limit (a positive integer). */
export const LIMIT_ENV: { readonly [K in keyof TransferLimits]: string } = {
  jsonBodyBytes: "EFFECT_SANDBOX_MAX_JSON_BODY_BYTES",
  jsonDepth: "EFFECT_SANDBOX_MAX_JSON_DEPTH",
  jsonContainers: "EFFECT_SANDBOX_MAX_JSON_CONTAINERS",
  uploadBytes: "EFFECT_SANDBOX_MAX_UPLOAD_BYTES",
  zipEntries: "EFFECT_SANDBOX_MAX_ZIP_ENTRIES",
  zipExpandedBytes: "EFFECT_SANDBOX_MAX_ZIP_EXPANDED_BYTES",
  zipRatio: "EFFECT_SANDBOX_MAX_ZIP_RATIO",
  downloadBytes: "EFFECT_SANDBOX_MAX_DOWNLOAD_BYTES",
  processes: "EFFECT_SANDBOX_MAX_PROCESSES",
  processOutputBytes: "EFFECT_SANDBOX_MAX_PROCESS_OUTPUT_BYTES"
}

/** The limits with those the environment sets; a value that is not a positive integer is an error. */
export const limitsFromEnv = (env: NodeJS.ProcessEnv): TransferLimits => {
  const limits: Record<string, number> = { ...DEFAULT_LIMITS }
  for (const [key, name] of Object.entries(LIMIT_ENV)) {
    const raw = env[name]
    if (raw === undefined || raw === "") continue
    const value = Number(raw)
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new Error(`${name} must be a positive integer, not ${JSON.stringify(raw)}`)
    }
    limits[key] = value
  }
  return limits as unknown as TransferLimits
}

/**
 * The message of a refusal: it names the limit and its value, e.g. "The download of / exceeds
 * the download limit of 2147483648 bytes" (and `isOverLimit` recognises it).
 */
export const overLimit = (what: string, limit: string, value: number, unit: string) =>
  `${what} exceeds the ${limit} limit of ${value} ${unit}`

/** Whether an error message is an `overLimit` refusal (answered 413 on the wire). */
export const isOverLimit = (message: string) => / exceeds the [a-z -]+ limit of \d+ /.test(message)
