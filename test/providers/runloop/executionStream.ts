/**
 * Runloop's `GET /v1/devboxes/{id}/executions/{eid}/stream_stdout_updates` (and
 * `stream_stderr_updates`), as `@runloop/api-client` 1.32 reads them: Server-Sent Events, each a
 * `data:` line holding an `ExecutionUpdateChunk` (`{ output, offset }`), from the byte offset the
 * `offset` query gives (the beginning without it), live while the execution runs; the stream ends
 * once the execution completed and all its output was sent (what the SDK's `exec` with callbacks
 * waits for; a completed execution's output is sent whole, as the SDK's smoke test reads it after
 * `awaitCompleted`).
 *
 * Two readings, each the one the SDK's reconnect (lib/streaming-reconnection.ts) is written for:
 * - a chunk's `offset` is the byte offset where it ends: the SDK asks again from the last chunk's
 *   offset, which then neither repeats nor skips a byte (its tests resume at items past it);
 * - a stream with no new output for the hold (Runloop's long polls hold ~30 s) ends with an SSE
 *   `error` event whose code is 408, which the SDK reads as its idle time-out and reconnects on.
 */
import type { Http2ServerResponse } from "node:http2"
import { ApiError, type Channel, type Devboxes, type Execution } from "./devboxes.ts"

/** The `offset` query: a whole number of bytes (0 when absent), else Runloop's 400. */
export const parseOffset = (offset: string | null): number => {
  if (offset === null || offset === "") return 0
  if (!/^\d+$/.test(offset)) throw new ApiError(400, `Invalid offset ${offset}: a byte offset, a whole number`)
  return Number(offset)
}

const event = (data: unknown, name?: string) =>
  `${name === undefined ? "" : `event: ${name}\n`}data: ${JSON.stringify(data)}\n\n`

/** Stream `channel` of `execution` from byte `from` to `response` until it completed, the hold passed, or the client left. */
export const streamOutput = async (
  devboxes: Devboxes,
  execution: Execution,
  channel: Channel,
  from: number,
  holdMs: number,
  response: Http2ServerResponse
): Promise<void> => {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  const left = new AbortController()
  response.on("close", () => left.abort())
  let sent = from
  for (;;) {
    const ready = await devboxes.waitFor(
      () => Buffer.byteLength(execution[channel]) > sent || execution.status === "completed" ? true : undefined,
      holdMs,
      left.signal
    )
    if (left.signal.aborted) return
    if (ready === undefined) {
      response.end(event({ code: "408", message: "No new output: stream again from the last offset" }, "error"))
      return
    }
    const output = Buffer.from(execution[channel])
    if (output.length > sent) {
      response.write(event({ output: output.subarray(sent).toString("utf8"), offset: output.length }))
      sent = output.length
    }
    if (execution.status === "completed") {
      response.end()
      return
    }
  }
}
