/**
 * A command sent to bash inside the line it types at the prompt, instead of through the script
 * file: `__es_run $'<command>'; eval "$__es_cmd"` gives `eval` the same text `__es_load` would
 * have read from the file, without the file's write (node) and its read and redirection (bash),
 * ~20 µs of bash's CPU and ~5 µs of ours a command, more when the disk is busy.
 *
 * The line passes through the terminal's line discipline, so every character it would act on is
 * written as an escape: control characters (^C is SIGINT, ^D end of file, ^U erases the line,
 * DEL erases a character, ...), and `!` (history expansion), `'` and `\` (the quoting). What is
 * left is printable text, which the terminal passes as it is. Commands the line could not carry
 * whole (a NUL, which the file's `read -d ''` ends at too, or longer than the terminal's line
 * buffer with room to spare) take the file.
 */

/** Bytes of a typed line the terminal surely keeps: its canonical-mode buffer holds 4,095. */
const MAX_TYPED_BYTES = 2000

/** Characters written as `\xHH` in the typed line. */
// eslint-disable-next-line no-control-regex
const ESCAPED = /[\x00-\x1f\x7f!'\\]/g

const hex = (c: string): string => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`

/** `script` as a bash ANSI-C string (`$'...'`) a terminal passes unchanged, or null when the file must carry it. */
export const typedScript = (script: string): string | null => {
  if (script.length > MAX_TYPED_BYTES || script.includes("\0")) return null
  const quoted = `$'${script.replace(ESCAPED, hex)}'`
  return Buffer.byteLength(quoted) > MAX_TYPED_BYTES ? null : quoted
}
