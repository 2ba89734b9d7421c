/**
 * A `/build` context on its way to the engine. The upload is capped as it arrives (buildUpload.ts),
 * but a gzip of zeros unpacks a thousand times over on the engine's disk: here the context is
 * unpacked as it is sent, and the build fails past its limit.
 */
import { createReadStream } from "node:fs"
import { pipeline, Transform } from "node:stream"
import { createGunzip } from "node:zlib"
import type { UploadedContext } from "./images.ts"

/**
 * The context as the engine gets it: the upload unpacked (an uncompressed tar) and counted on the
 * way, so a small gzip that unpacks to gigabytes stops at `maxBytes` instead of filling the
 * engine's disk. `exceeded` says afterwards whether that is why the stream ended.
 */
export const unpackedContext = (context: UploadedContext, maxBytes: number) => {
  let bytes = 0
  let exceeded = false
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length
      exceeded = bytes > maxBytes
      done(exceeded ? new Error("the build context unpacks past its limit") : null, chunk)
    }
  })
  const stream = pipeline(createReadStream(context.path), createGunzip(), counter, () => undefined)
  return { stream, exceeded: () => exceeded }
}
