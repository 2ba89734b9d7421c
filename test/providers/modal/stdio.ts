/**
 * A sandbox command's standard output or error as the task command router serves it live
 * (`SandboxStdioReadV2`, what the SDK's `sandbox.stdout`/`stderr` read for a V2 sandbox): the bytes
 * kept from the command's start, each read from the request's byte `offset`, answered as the bytes
 * come (never an empty message, which the SDK throws on), the first message's `startingOffset`
 * where its data begins; the call ends (OK) once the stream reached its end and all was sent, which
 * the SDK takes for EOF. A read cut off is resumed by the SDK at the offset it reached.
 */
export class LiveOutput {
  private bytes = Buffer.alloc(0)
  private ended = false
  private readonly waiting = new Set<() => void>()
  /** Reads being served now (a client that cancelled its read is no longer counted). */
  reading = 0

  append(chunk: Buffer) {
    if (this.ended || chunk.length === 0) return
    this.bytes = Buffer.concat([this.bytes, chunk])
    this.wake()
  }

  /** The command's end (or the sandbox's): what was printed is all there is. */
  end() {
    this.ended = true
    this.wake()
  }

  get text() {
    return this.bytes.toString("utf8")
  }

  private wake() {
    for (const wake of this.waiting) wake()
    this.waiting.clear()
  }

  /** The messages of one read from `offset`, as the bytes come, until the end or `signal`. */
  async *from(offset: number, signal: AbortSignal): AsyncGenerator<{ data: Buffer; startingOffset: number }> {
    this.reading++
    try {
      yield* this.served(offset, signal)
    } finally {
      this.reading--
    }
  }

  private async *served(offset: number, signal: AbortSignal) {
    let at = offset
    while (!signal.aborted) {
      if (this.bytes.length > at) {
        const data = this.bytes.subarray(at)
        yield { data, startingOffset: at }
        at += data.length
      } else if (this.ended) {
        return
      } else {
        await new Promise<void>((resolve) => {
          const wake = () => {
            signal.removeEventListener("abort", wake)
            this.waiting.delete(wake)
            resolve()
          }
          this.waiting.add(wake)
          signal.addEventListener("abort", wake, { once: true })
        })
      }
    }
  }
}
