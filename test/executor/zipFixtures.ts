/**
 * Hand-made zip archives for the extraction tests: a zip whose headers say what the
 * test wants (sizes that lie, link entries, names a zip tool would never write),
 * and deflate data for gigabytes of zeros made in milliseconds.
 */
import { constants as zlib, crc32, deflateRawSync } from "node:zlib"

export interface RawEntry {
  readonly name: string
  /** The stored bytes (deflated when `method` is 8). */
  readonly data: Uint8Array
  readonly method?: 0 | 8
  readonly crc?: number
  /** The uncompressed size the headers declare. */
  readonly size: number
  /** Unix `st_mode` (type bits included), stored in the external attributes. */
  readonly mode?: number
}

/** A stored (uncompressed) entry of `content`. */
export const stored = (name: string, content: string | Uint8Array, mode?: number): RawEntry => {
  const data = typeof content === "string" ? new TextEncoder().encode(content) : content
  return { name, data, size: data.length, crc: crc32(data), ...(mode === undefined ? {} : { mode }) }
}

const ZEROS_CHUNK = 64 * 1024 * 1024

/**
 * Raw deflate data for `chunks` × 64 MiB of zeros: one chunk compressed with a sync flush
 * (no final block, byte-aligned) repeated, then an empty final block. Returns the CRC too.
 */
export const zeros = (chunks: number): { readonly data: Uint8Array; readonly crc: number; readonly size: number } => {
  const block = new Uint8Array(ZEROS_CHUNK)
  const flushed = deflateRawSync(block, { finishFlush: zlib.Z_SYNC_FLUSH })
  let crc = 0
  for (let i = 0; i < chunks; i++) crc = crc32(block, crc)
  const data = Buffer.concat([...Array.from({ length: chunks }, () => flushed), Buffer.from([0x03, 0x00])])
  return { data, crc, size: chunks * ZEROS_CHUNK }
}

/** A zip of `entries` (no zip64: sizes below 4 GiB), exactly as described. */
export const makeZip = (entries: ReadonlyArray<RawEntry>): Buffer => {
  const locals: Array<Buffer> = []
  const centrals: Array<Buffer> = []
  let offset = 0
  for (const entry of entries) {
    const name = Buffer.from(entry.name, "utf8")
    const method = entry.method ?? 0
    const crc = entry.crc ?? crc32(entry.data)
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0)
    local.writeUInt16LE(20, 4)
    local.writeUInt16LE(0x0800, 6) // UTF-8 names
    local.writeUInt16LE(method, 8)
    local.writeUInt32LE(crc, 14)
    local.writeUInt32LE(entry.data.length, 18)
    local.writeUInt32LE(entry.size, 22)
    local.writeUInt16LE(name.length, 26)
    const central = Buffer.alloc(46)
    central.writeUInt32LE(0x02014b50, 0)
    central.writeUInt16LE(entry.mode === undefined ? 20 : (3 << 8) | 20, 4)
    central.writeUInt16LE(20, 6)
    central.writeUInt16LE(0x0800, 8)
    central.writeUInt16LE(method, 10)
    central.writeUInt32LE(crc, 16)
    central.writeUInt32LE(entry.data.length, 20)
    central.writeUInt32LE(entry.size, 24)
    central.writeUInt16LE(name.length, 28)
    central.writeUInt32LE(((entry.mode ?? 0) << 16) >>> 0, 38)
    central.writeUInt32LE(offset, 42)
    locals.push(local, name, Buffer.from(entry.data))
    centrals.push(central, name)
    offset += 30 + name.length + entry.data.length
  }
  const directory = Buffer.concat(centrals)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(entries.length, 8)
  end.writeUInt16LE(entries.length, 10)
  end.writeUInt32LE(directory.length, 12)
  end.writeUInt32LE(offset, 16)
  return Buffer.concat([...locals, directory, end])
}
