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
  const local = Buffer.alloc(30)
  local.writeUInt32LE(0x04034b50, 0)
  local.writeUInt16LE(20, 4)
  local.writeUInt16LE(8, 8)
  local.writeUInt16LE(0x21, 12)
  local.writeUInt32LE(crc >>> 0, 14)
  local.writeUInt32LE(data.length, 18)
  local.writeUInt32LE(size, 22)
  local.writeUInt16LE(file.length, 26)
  const central = Buffer.alloc(46)
  central.writeUInt32LE(0x02014b50, 0)
  central.writeUInt16LE(20, 4)
  central.writeUInt16LE(20, 6)
  central.writeUInt16LE(8, 10)
  central.writeUInt16LE(0x21, 14)
  central.writeUInt32LE(crc >>> 0, 16)
  central.writeUInt32LE(data.length, 20)
  central.writeUInt32LE(size, 24)
  central.writeUInt16LE(file.length, 28)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(1, 8)
  end.writeUInt16LE(1, 10)
  end.writeUInt32LE(central.length + file.length, 12)
  end.writeUInt32LE(local.length + file.length + data.length, 16)
  return Buffer.concat([local, file, data, central, file, end])
}
