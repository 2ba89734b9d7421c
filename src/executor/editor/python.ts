/**
 * The Python behaviours that leak into OHEditor's messages and output: how `pathlib` prints a
 * path, `str.strip`, `str.splitlines`, `int()` on a string, list and OSError formatting.
 */
import { pythonRepr } from "../../quoting/pythonRepr.ts"

/** Characters `str.isspace()` accepts (JavaScript's `\s` differs: it has U+FEFF, lacks 0x1C–0x1F and 0x85). */
const WHITESPACE = "[\\t\\n\\v\\f\\r \\x1c-\\x1f\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]"
const LEADING_WHITESPACE = new RegExp(`^${WHITESPACE}+`)
const TRAILING_WHITESPACE = new RegExp(`${WHITESPACE}+$`)

/** `str.rstrip()`. */
export const rstrip = (text: string): string => text.replace(TRAILING_WHITESPACE, "")

/** `str.strip()`. */
export const strip = (text: string): string => rstrip(text).replace(LEADING_WHITESPACE, "")

/** `str.splitlines()`: splits on every Unicode line boundary and drops the final empty piece. */
export const splitlines = (text: string): Array<string> => {
  const lines = text.split(/\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]/)
  if (lines[lines.length - 1] === "") lines.pop()
  return lines
}

/**
 * `str(pathlib.PurePosixPath(path))`: repeated slashes and `.` segments collapse and a trailing
 * slash goes (exactly two leading slashes are kept, as POSIX allows); `..` stays.
 */
export const pathStr = (path: string): string => {
  const root = path.startsWith("//") && !path.startsWith("///") ? "//" : path.startsWith("/") ? "/" : ""
  const parts = path.split("/").filter((part) => part !== "" && part !== ".")
  return root + parts.join("/") || "."
}

/** `PurePath.suffix`: the final component's last `.ext`, none for dotfiles or a trailing dot. */
export const suffix = (path: string): string => {
  const name = path.slice(path.lastIndexOf("/") + 1)
  const dot = name.lastIndexOf(".")
  return dot > 0 && dot < name.length - 1 ? name.slice(dot) : ""
}

/** `int(text)` for a string: optional sign, digits with single `_` separators, surrounding whitespace. */
export const toInt = (text: string): number | undefined => {
  const trimmed = strip(text)
  return /^[+-]?\d+(?:_\d+)*$/.test(trimmed) ? Number(trimmed.replaceAll("_", "")) : undefined
}

/** `str(list_of_numbers)`, e.g. `[1, 2]`. */
export const listStr = (values: ReadonlyArray<number>): string => `[${values.join(", ")}]`

/** Linux errno numbers and `strerror` texts for the failures a file edit can meet. */
const OS_ERRORS: Readonly<Record<string, readonly [errno: number, text: string]>> = {
  EPERM: [1, "Operation not permitted"],
  ENOENT: [2, "No such file or directory"],
  EACCES: [13, "Permission denied"],
  EEXIST: [17, "File exists"],
  ENOTDIR: [20, "Not a directory"],
  EISDIR: [21, "Is a directory"],
  ENOSPC: [28, "No space left on device"],
  EROFS: [30, "Read-only file system"],
  ENAMETOOLONG: [36, "File name too long"],
  ELOOP: [40, "Too many levels of symbolic links"]
}

/** `str(OSError)` for a failed operation on `path`, e.g. `[Errno 2] No such file or directory: '/x'`. */
export const osErrorStr = (
  cause: { readonly code?: string | undefined; readonly message: string },
  path: string
): string => {
  const known = cause.code === undefined ? undefined : OS_ERRORS[cause.code]
  return known === undefined ? cause.message : `[Errno ${known[0]}] ${known[1]}: ${pythonRepr(path)}`
}
