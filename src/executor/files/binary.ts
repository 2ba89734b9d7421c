/**
 * Text-or-binary detection, ported from binaryornot 0.4.4 (`is_binary`), which OpenHands uses
 * to refuse reading and editing binary files.
 */
import { Effect } from "effect"
import type { FileHandle } from "node:fs/promises"

/** How much of a file binaryornot looks at. */
const SAMPLE_SIZE = 1024

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/**
 * Strict UTF-8 decoding, or `undefined` when the bytes are not valid UTF-8. A BOM is kept as
 * U+FEFF, as Python's `utf-8` codec does, so rewriting the text keeps it.
 */
export const decodeUtf8 = (bytes: Uint8Array): string | undefined => {
  try {
    return utf8.decode(bytes)
  } catch {
    return undefined
  }
}

/** binaryornot's `_printable_ascii`: `\n \r \t \f \b` and 0x20–0x7E. */
const isPrintableAscii = (byte: number): boolean =>
  (byte >= 0x20 && byte <= 0x7e) || byte === 0x0a || byte === 0x0d || byte === 0x09 || byte === 0x0c ||
  byte === 0x08

/**
 * binaryornot's `is_binary_string`. Its chardet step ("an encoding other than ascii detected with
 * confidence > 0.9 decodes the sample → text") is approximated, since we have no chardet, as "the
 * sample is valid UTF-8 and contains non-ASCII bytes". The two agree on what matters here (UTF-8
 * text is text, a PNG is binary); chardet also vouches for some legacy single-byte encodings,
 * which then fall through to the ratio and NUL/0xFF checks.
 */
export const isBinaryBytes = (bytes: Uint8Array): boolean => {
  if (bytes.length === 0) return false
  let nonPrintable = 0
  let belowHigh = 0
  let nonAscii = false
  for (const byte of bytes) {
    if (!isPrintableAscii(byte)) nonPrintable++
    if (byte < 0x7f) belowHigh++
    if (byte >= 0x80) nonAscii = true
  }
  // binaryornot's names: nontext_ratio1 is the share outside _printable_ascii, nontext_ratio2
  // the share outside 0x7F–0xFF.
  const ratio1 = nonPrintable / bytes.length
  const ratio2 = belowHigh / bytes.length
  const likelyBinary = (ratio1 > 0.3 && ratio2 < 0.05) || (ratio1 > 0.8 && ratio2 > 0.8)
  if (nonAscii && decodeUtf8(bytes) !== undefined) return false
  return likelyBinary || bytes.includes(0x00) || bytes.includes(0xff)
}

/** The first bytes of an opened file, read through its descriptor. */
const readSample = async (handle: FileHandle): Promise<Uint8Array> => {
  const buffer = new Uint8Array(SAMPLE_SIZE)
  const { bytesRead } = await handle.read(buffer, 0, SAMPLE_SIZE, 0)
  return buffer.subarray(0, bytesRead)
}

/**
 * binaryornot's `is_binary` for the file opened as `handle` at `path`: `.pyc` files are binary;
 * otherwise the first 1024 bytes decide. A file that cannot be read counts as text, as in
 * binaryornot, so the caller's own read reports the real problem.
 */
export const isBinaryFile = (path: string, handle: FileHandle): Effect.Effect<boolean> =>
  path.endsWith(".pyc")
    ? Effect.succeed(true)
    : Effect.promise(() => readSample(handle).then(isBinaryBytes, () => false))
