/**
 * The HTTP client streams transfers: copying 256 MiB in and out through a Local
 * runtime's server leaves this process's peak memory where it was (before, the
 * file was read whole into a Buffer and copied into a Blob and the form on the way
 * in, and the zip into an ArrayBuffer on the way out: the peak grew by ~970 MiB).
 * Streamed, what remains is chunks in flight and garbage not yet collected.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import { join } from "node:path"
import { Runtime } from "../../src/index.ts"
import { LocalRuntime } from "../../src/local.ts"

const MiB = 1024 * 1024

describe("ActionClient transfers", () => {
  it.live("copyTo and copyFrom of 256 MiB keep this process's peak memory flat", () =>
    Effect.gen(function*() {
      const host = yield* Effect.acquireRelease(
        Effect.sync(() => fs.mkdtempSync(join(os.tmpdir(), "client-transfer-"))),
        (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
      )
      const big = join(host, "big.bin")
      fs.closeSync(fs.openSync(big, "w"))
      fs.truncateSync(big, 256 * MiB)
      const rt = yield* Runtime
      const peak = process.resourceUsage().maxRSS * 1024
      yield* rt.copyTo(big, `${rt.info.workspace}/in`)
      yield* rt.copyFrom(`${rt.info.workspace}/in/big.bin`, join(host, "out.zip"))
      const growth = process.resourceUsage().maxRSS * 1024 - peak
      assert.isBelow(growth, 128 * MiB, `peak RSS grew by ${Math.round(growth / MiB)} MiB`)
      assert.isAbove(fs.statSync(join(host, "out.zip")).size, 1000)
    }).pipe(Effect.provide(LocalRuntime.layer({ noChangeTimeoutSeconds: 1 }))), 120_000)
})
