/**
 * OHEditor's checks before a command runs (`validate_path`, `validate_file`), in its order and
 * with its messages.
 */
import { Effect } from "effect"
import { isBinaryFile } from "../files/binary.ts"
import { openFile, readBounded } from "../files/safeOpen.ts"
import { fileValidation, parameterInvalid, ToolError } from "./errors.ts"
import { statOrNull } from "./fileText.ts"
import { osErrorStr, suffix } from "./python.ts"
import type { Target } from "./types.ts"

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
    const stats = yield* statOrNull(target.path)
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

const tooLarge = (target: Target, size: number) =>
  fileValidation(target.display, `File is too large (${megabytes(size)}MB). Maximum allowed size is 10MB.`)

/**
 * `validate_file` then the read, on one descriptor opened through `safeOpen` (a device, FIFO or
 * socket is refused, not read): at most 10 MiB, counted in bytes read, and not binary unless it
 * is one of the Markdown-viewable kinds. Failures to read are OHEditor's
 * `Ran into <OSError> while trying to read <path>`.
 */
export const readValidFile = (target: Target): Effect.Effect<Buffer, ToolError> =>
  Effect.gen(function*() {
    const file = yield* openFile(target, target.display)
    if (file.stats.size > MAX_FILE_SIZE) return yield* tooLarge(target, file.stats.size)
    if (!isSupportedBinary(target) && (yield* isBinaryFile(target.path, file.handle))) {
      return yield* fileValidation(
        target.display,
        "File appears to be binary and this file type cannot be read or edited by this tool."
      )
    }
    return yield* readBounded(file, MAX_FILE_SIZE)
  }).pipe(
    Effect.scoped,
    Effect.catchTags({
      FsFailure: (cause) =>
        Effect.fail(
          new ToolError({
            message: `Ran into ${osErrorStr(cause, target.display)} while trying to read ${target.display}`
          })
        ),
      FileTooLarge: ({ size }) => Effect.fail(tooLarge(target, size)),
      UnsafeFile: ({ message }) => Effect.fail(new ToolError({ message }))
    })
  )
