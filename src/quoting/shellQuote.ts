/**
 * The one way src/ writes a string as a single POSIX shell word. Single quotes keep every byte
 * literal (newlines, `\r`, `$`, backslashes) except the single quote itself, which closes the
 * quotes, is escaped, and reopens them: the same word for bash, dash and busybox sh.
 */

/** `value` as one single-quoted shell word: `it's` → `'it'\''s'`. */
export const shellQuote = (value: string): string => `'${value.replaceAll("'", "'\\''")}'`
