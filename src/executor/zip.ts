/**
 * Zip archives for copying trees in and out of a sandbox (OpenHands' upload and
 * download format). fflate does the (de)compression; Unix file modes travel in
 * the entries' external attributes so executable scripts stay executable, and
 * extraction refuses entries that would land outside the destination.
 */
import { unzipSync, type Zippable, zipSync } from "fflate"
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { basename, dirname, join, resolve, sep } from "node:path"

const UNIX = 3

/** Zip a directory's contents (names relative to it, `prefix/` prepended when given). */
export const zipDirectory = (dir: string, prefix = ""): Uint8Array => {
  const entries: Zippable = {}
  const walk = (absolute: string, relative: string) => {
    for (const name of readdirSync(absolute)) {
      const path = join(absolute, name)
      const entry = relative + name
      const stat = lstatSync(path)
      if (stat.isDirectory()) {
        entries[`${entry}/`] = [new Uint8Array(), { os: UNIX, attrs: (stat.mode & 0o7777 | 0o40000) << 16 }]
        walk(path, `${entry}/`)
      } else if (stat.isFile()) {
        entries[entry] = [readFileSync(path), { os: UNIX, attrs: (stat.mode & 0o7777 | 0o100000) << 16 }]
      }
    }
  }
  if (prefix !== "") entries[`${prefix}/`] = [new Uint8Array(), { os: UNIX, attrs: 0o40755 << 16 }]
  walk(dir, prefix === "" ? "" : `${prefix}/`)
  return zipSync(entries)
}

/** Zip one file under its base name. */
export const zipFile = (file: string): Uint8Array => {
  const mode = lstatSync(file).mode & 0o7777
  return zipSync({ [basename(file)]: [readFileSync(file), { os: UNIX, attrs: (mode | 0o100000) << 16 }] })
}

/** Unix modes by entry name, read from the central directory (fflate does not expose them). */
const entryModes = (zip: Uint8Array): Map<string, number> => {
  const modes = new Map<string, number>()
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength)
  const decoder = new TextDecoder()
  for (let at = 0; at + 46 <= zip.length;) {
    if (view.getUint32(at, true) !== 0x02014b50) {
      at++
      continue
    }
    const madeBy = view.getUint16(at + 4, true) >> 8
    const nameLength = view.getUint16(at + 28, true)
    const extraLength = view.getUint16(at + 30, true)
    const commentLength = view.getUint16(at + 32, true)
    const attrs = view.getUint32(at + 38, true)
    const name = decoder.decode(zip.subarray(at + 46, at + 46 + nameLength))
    if (madeBy === UNIX && attrs >>> 16 !== 0) modes.set(name, (attrs >>> 16) & 0o7777)
    at += 46 + nameLength + extraLength + commentLength
  }
  return modes
}

/** Extract into `dest` (created). Fails on an entry that escapes `dest`. */
export const extractZip = (zip: Uint8Array, dest: string): void => {
  const root = resolve(dest)
  const files = unzipSync(zip)
  const modes = entryModes(zip)
  mkdirSync(root, { recursive: true })
  for (const [name, data] of Object.entries(files)) {
    const target = resolve(root, name)
    if (target !== root && !target.startsWith(root + sep)) {
      throw new Error(`Zip entry "${name}" would be written outside ${root}`)
    }
    if (name.endsWith("/")) {
      mkdirSync(target, { recursive: true })
    } else {
      mkdirSync(dirname(target), { recursive: true })
      writeFileSync(target, data)
    }
    const mode = modes.get(name)
    if (mode !== undefined) chmodSync(target, mode)
  }
}
