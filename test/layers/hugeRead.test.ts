/**
 * Reading a huge file through a runtime (`read`, FileReadAction) is refused with a message the
 * agent can act on, not read into memory: the executor's 32 MiB cap (test/executor/fileSafety.test.ts)
 * as CliRuntime and LocalRuntime (over HTTP) answer it. The editor's `view` has its own, OpenHands',
 * 10 MB cap.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { truncateSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import {
  CliRuntime,
  ErrorObservation,
  FileEditObservation,
  FileReadAction,
  FileReadObservation,
  Runtime
} from "../../src/index.ts"
import { LocalRuntime } from "../../src/local.ts"

const SIZE = 33 << 20

const layers = [
  ["cli", () => CliRuntime.layer()],
  ["local", () => LocalRuntime.layer()]
] as const

describe("read of a huge file", () => {
  for (const [kind, layer] of layers) {
    it.live(
      `${kind}: an ErrorObservation saying it is too large and what to do instead`,
      () =>
        Effect.scoped(Effect.gen(function*() {
          const rt = Context.get(yield* Layer.build(layer()), Runtime)
          const path = join(rt.info.workspace, "big.txt")
          // Text at the start (the binary check reads 1024 bytes), then sparse: 33 MiB that take no disk.
          writeFileSync(path, "a".repeat(2048))
          truncateSync(path, SIZE)
          const read = yield* rt.read(path)
          assert.instanceOf(read, ErrorObservation)
          assert.strictEqual(
            read.content,
            `File is too large to read: ${path} (${SIZE} bytes; at most ${32 << 20} bytes are read).`
              + " Use the shell to read parts of it."
          )
          const viewed = yield* rt.edit({ command: "view", path })
          assert.instanceOf(viewed, FileEditObservation)
          assert.strictEqual(
            viewed.content,
            `ERROR:\nFile validation failed for ${path}: File is too large (33.0MB). Maximum allowed size is 10MB.`
          )
          // A large file under the caps, read the editor's way, is clipped at 16,000 characters with its note.
          const large = join(rt.info.workspace, "large.txt")
          writeFileSync(large, "0123456789\n".repeat(100_000))
          const clipped = yield* rt.read(new FileReadAction({ path: large, implSource: "oh_aci" }))
          assert.instanceOf(clipped, FileReadObservation)
          assert.isBelow(clipped.content.length, 30_000) // 16,000 characters plus line numbers, of 1.1 MB
          assert.include(clipped.content, "<response clipped><NOTE>Due to the max output limit, only part of this file")
        })),
      60_000
    )
  }
})
