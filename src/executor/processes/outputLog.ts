/**
 * A background process's output, kept so that a reader who comes late (or after the
 * exit) still sees it from the start, and given to every reader as it arrives. It
 * keeps at most `capBytes` (the oldest output goes first), so a process printing
 * forever costs a bounded amount of memory. Readers pull from the log at their own
 * pace rather than being pushed copies: a reader who stops reading costs nothing, and
 * one who falls behind by more than the cap is told how much it missed.
 */
import { Deferred, Effect, Queue, Stream } from "effect"
import type { ProcessOutput } from "../../schema/process.ts"

/** A kept chunk, with its place in the whole output (bytes since the process started). */
interface Kept {
  readonly output: ProcessOutput
  readonly offset: number
  readonly size: number
}

/** How far a reader may run ahead of its consumer, in chunks (a bounded queue between them). */
const READ_AHEAD = 16

export class OutputLog {
  private readonly chunks: Array<Kept> = []
  private bytes = 0
  /** Bytes appended since the start: where the next chunk begins. */
  private total = 0
  private ended = false
  /** Completed (and replaced) at every append and at the end: what waiting readers wait for. */
  private changed = Deferred.makeUnsafe<void>()
  private readonly capBytes: number

  constructor(capBytes: number) {
    this.capBytes = capBytes
  }

  append(output: ProcessOutput): void {
    if (this.ended || output.text.length === 0) return
    const size = Buffer.byteLength(output.text)
    this.chunks.push({ output, offset: this.total, size })
    this.total += size
    this.bytes += size
    while (this.bytes > this.capBytes) this.dropOldest(this.bytes - this.capBytes)
    this.wake()
  }

  /** No more output: every reader's stream ends after what it has not read yet. */
  end(): void {
    this.ended = true
    this.wake()
  }

  /** What is kept, then what arrives, until `end`, read at the consumer's pace. */
  get stream(): Stream.Stream<ProcessOutput> {
    return Stream.callback<ProcessOutput>((queue) =>
      Effect.gen({ self: this }, function*() {
        let position = 0
        while (true) {
          const { ready, next, ended, changed } = this.readFrom(position)
          position = next
          for (const chunk of ready) yield* Queue.offer(queue, chunk)
          if (ended && ready.length === 0) return yield* Queue.end(queue)
          if (ready.length === 0) yield* Deferred.await(changed)
        }
      }), { bufferSize: READ_AHEAD })
  }

  /** The chunks after byte `position` (led by a notice when some were dropped before it was read), at once. */
  private readFrom(position: number) {
    const ready: Array<ProcessOutput> = []
    let next = position
    const first = this.chunks[0]?.offset ?? this.total
    if (first > next) {
      ready.push(this.notice(first - next))
      next = first
    }
    for (const chunk of this.chunks) {
      if (chunk.offset < next) continue
      ready.push(chunk.output)
      next = chunk.offset + chunk.size
    }
    return { ready, next, ended: this.ended, changed: this.changed }
  }

  private wake(): void {
    const changed = this.changed
    this.changed = Deferred.makeUnsafe<void>()
    Deferred.doneUnsafe(changed, Effect.void)
  }

  /** Drop `excess` bytes from the oldest output: its first chunk, or that chunk's head (at a character boundary). */
  private dropOldest(excess: number): void {
    const first = this.chunks[0]!
    const bytes = Buffer.from(first.output.text)
    let cut = Math.min(excess, bytes.length)
    while (cut < bytes.length && (bytes[cut]! & 0xc0) === 0x80) cut++
    if (cut === bytes.length) this.chunks.shift()
    else {
      this.chunks[0] = {
        output: { stream: first.output.stream, text: bytes.subarray(cut).toString("utf8") },
        offset: first.offset + cut,
        size: first.size - cut
      }
    }
    this.bytes -= cut
  }

  /** Stands for output a reader missed (dropped to keep within the cap before it read it). */
  private notice(bytes: number): ProcessOutput {
    return {
      stream: "stderr",
      text: `[${bytes} bytes of earlier output dropped: a background process keeps its last ${this.capBytes} bytes]\n`
    }
  }
}
