/**
 * Control keys an agent sends as `is_input` text: OpenHands (via tmux) treats a
 * stripped input of exactly `C-<x>` as a key press sent without Enter.
 */

/** The control character for `C-c`, `C-z`, `C-d`, ... or `null` when `input` is not a key. */
export const controlKey = (input: string): string | null => {
  if (input.length !== 3 || !input.startsWith("C-")) return null
  return String.fromCharCode(input.toUpperCase().charCodeAt(2) & 0x1f)
}

/** C-c's character, which signals SIGINT to the foreground job. */
export const INTERRUPT_KEY = "\x03"

/**
 * What a terminal with `echoctl` prints for the keys that signal the foreground job
 * (`^C`, `^Z`, `^\`). Our PTY runs with echo off so commands are never echoed; we
 * print these ourselves so observations read as OpenHands' do (`^C` then exit 130).
 */
export const echoOfKey = (key: string): string => {
  switch (key) {
    case INTERRUPT_KEY:
      return "^C"
    case "\x1a":
      return "^Z"
    case "\x1c":
      return "^\\"
    default:
      return ""
  }
}
