/**
 * OHEditor's checks before a command runs (`validate_path`, `validate_file`), in its order and
 * with its messages.
 */
import { Effect } from "effect"
import { isBinaryFile } from "../files/binary.ts"
import { fileValidation, parameterInvalid, type ToolError } from "./errors.ts"
import { statOrNull } from "./fileText.ts"
import { suffix } from "./python.ts"

/** A file the editor works on: the path as the agent wrote it (for messages) and where it really is. */
export interface Target {
  /** The agent's path as Python's `pathlib` prints it. */
  readonly display: string
  /** The resolved path on this machine. */
  readonly real: string
}

/** Extensions OHEditor views as Markdown (through markitdown) rather than refusing as binary. */
const SUPPORTED_BINARY_EXTENSIONS = [".docx", ".xlsx", ".pptx", ".pdf", ".mp3", ".wav", ".m4a", ".flac"]

export const isSupportedBinary = (target: Target): boolean =>
  SUPPORTED_BINARY_EXTENSIONS.includes(suffix(target.display).toLowerCase())

/** `MAX_FILE_SIZE_MB`, in bytes. */
const MAX_FILE_SIZE = 10 * 1024 * 1024

/** Python's `f"{size / 1024 / 1024:.1f}"`, which rounds the exact quotient half to even. */
const megabytes = (size: number): string => {
  const unit = 1024 * 1024
  let tenths = Math.floor((size * 10) / unit)
  const twiceRemainder = 2 * ((size * 10) % unit)
  if (twiceRemainder > unit || (twiceRemainder === unit && tenths % 2 === 1)) tenths++
  return `${Math.floor(tenths / 10)}.${tenths % 10}`
}

/**
 * `validate_path` after the absolute-path check: `create` needs a new path, every other command
 * an existing one, and only `view` accepts directories and Markdown-viewable binaries.
 */
export const validatePath = (command: string, target: Target): Effect.Effect<void, ToolError> =>
  Effect.gen(function*() {
    const path = target.display
    const invalid = (hint: string) => parameterInvalid("path", path, hint)
    const stats = yield* statOrNull(target.real)
    if (command === "create" && stats !== null) {
      return yield* invalid(`File already exists at: ${path}. Cannot overwrite files using command \`create\`.`)
    }
    if (command !== "create" && stats === null) {
      return yield* invalid(`The path ${path} does not exist. Please provide a valid path.`)
    }
    if (command === "view") return
    if (stats?.isDirectory()) {
      return yield* invalid(
        `The path ${path} is a directory and only the \`view\` command can be used on directories.`
      )
    }
    if (isSupportedBinary(target)) {
      return yield* invalid(
        `The path ${path} points to a binary file (${
          suffix(path)
        }) and only the \`view\` command can be used on supported binary files.`
      )
    }
  })

/**
 * `validate_file`, for existing regular files only: at most 10 MiB, and not binary unless it is
 * one of the Markdown-viewable kinds.
 */
export const validateFile = (target: Target): Effect.Effect<void, ToolError> =>
  Effect.gen(function*() {
    const stats = yield* statOrNull(target.real)
    if (stats === null || !stats.isFile()) return
    if (stats.size > MAX_FILE_SIZE) {
      return yield* fileValidation(
        target.display,
        `File is too large (${megabytes(stats.size)}MB). Maximum allowed size is 10MB.`
      )
    }
    if (!isSupportedBinary(target) && (yield* isBinaryFile(target.real))) {
      return yield* fileValidation(
        target.display,
        "File appears to be binary and this file type cannot be read or edited by this tool."
      )
    }
  })
