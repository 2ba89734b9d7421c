/**
 * A background process's output, kept so that a reader who comes late (or after the
 * exit) still sees it from the start, and handed to every reader as it arrives. It
 * keeps at most `capBytes` (the oldest chunks go first, and readers who come later are
 * told how much was dropped), so a process printing forever costs a bounded amount of memory.
 */
import { type Cause, Effect, Queue, Stream } from "effect"
import type { ProcessOutput } from "../../schema/process.ts"

export class OutputLog {
  private readonly chunks: Array<ProcessOutput> = []
  private bytes = 0
  private dropped = 0
  private ended = false
  private readonly readers = new Set<Queue.Queue<ProcessOutput, Cause.Done>>()
  private readonly capBytes: number

  constructor(capBytes: number) {
    this.capBytes = capBytes
  }

  append(chunk: ProcessOutput): void {
    if (this.ended || chunk.text.length === 0) return
    this.chunks.push(chunk)
    this.bytes += Buffer.byteLength(chunk.text)
    while (this.bytes > this.capBytes) this.dropOldest(this.bytes - this.capBytes)
    for (const reader of this.readers) Queue.offerUnsafe(reader, chunk)
  }

  /** No more output: every reader's stream ends after what it has. */
  end(): void {
    this.ended = true
    for (const reader of this.readers) Queue.endUnsafe(reader)
    this.readers.clear()
  }

  /** What is kept, then what arrives, until `end`. Replay and subscription happen at once (one tick). */
  get stream(): Stream.Stream<ProcessOutput> {
    return Stream.callback<ProcessOutput>((queue) =>
      Effect.acquireRelease(
        Effect.sync(() => {
          if (this.dropped > 0) Queue.offerUnsafe(queue, this.notice())
          for (const chunk of this.chunks) Queue.offerUnsafe(queue, chunk)
          if (this.ended) Queue.endUnsafe(queue)
          else this.readers.add(queue)
        }),
        () => Effect.sync(() => this.readers.delete(queue))
      )
    )
  }

  /** Drop `excess` bytes from the oldest output: its first chunk, or that chunk's head (at a character boundary). */
  private dropOldest(excess: number): void {
    const first = this.chunks[0]!
    const bytes = Buffer.from(first.text)
    let cut = Math.min(excess, bytes.length)
    while (cut < bytes.length && (bytes[cut]! & 0xc0) === 0x80) cut++
    if (cut === bytes.length) this.chunks.shift()
    else this.chunks[0] = { stream: first.stream, text: bytes.subarray(cut).toString("utf8") }
    this.bytes -= cut
    this.dropped += cut
  }

  /** Stands for output dropped to keep within the cap, at the start of a late reader's stream. */
  private notice(): ProcessOutput {
    return {
      stream: "stderr",
      text:
        `[${this.dropped} bytes of earlier output dropped: a background process keeps its last ${this.capBytes} bytes]\n`
    }
  }
}
