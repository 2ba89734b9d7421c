/**
 * A `/build` context on its way to the engine. The upload is capped as it arrives (buildUpload.ts),
 * but a gzip of zeros unpacks a thousand times over on the engine's disk: here the context is
 * unpacked as it is read, and fails past its limit.
 */
import { createReadStream } from "node:fs"
import { pipeline, Transform } from "node:stream"
import { createGunzip } from "node:zlib"
import { BuildFailed } from "../engines/docker/engineBuild.ts"
import type { UploadedContext } from "./images.ts"

/** How much larger than its upload a context may unpack (source code compresses 3 to 5 times). */
const UNPACKED_PER_UPLOADED = 4

/**
 * The context unpacked (an uncompressed tar), counted on the way so that it stops at
 * `UNPACKED_PER_UPLOADED` times the upload cap; `explain` turns a failure of whatever read it into
 * that reason when it is why the stream ended.
 */
export const unpackedContext = (context: UploadedContext, maxUploadBytes: number) => {
  const maxBytes = UNPACKED_PER_UPLOADED * maxUploadBytes
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
  const explain = <E>(error: E): E | BuildFailed =>
    exceeded
      ? new BuildFailed({
        error: `The build context unpacks to more than ${
          Math.floor(maxBytes / (1024 * 1024))
        } MiB (${UNPACKED_PER_UPLOADED} times --build-max-upload-mb)`,
        log: []
      })
      : error
  return { stream, explain }
}
