/**
 * A sandbox's last log lines as errors and the runtime API quote them, whichever engine kept them:
 * without the blank end, and each line cut to a readable length (a stack trace can hold a whole
 * minified bundle on one line, and a sandbox can print a line of any length on purpose).
 */

/** Longest log line quoted. */
const MAX_LINE = 300

/** `log`'s lines, the trailing blank space dropped, each longer than MAX_LINE cut there with `...`. */
export const quotedLines = (log: string): string =>
  log.trimEnd().split("\n").map((line) => line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)}...` : line).join("\n")
