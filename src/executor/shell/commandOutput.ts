/**
 * The output of one command, held in bounded memory however much it prints.
 *
 * Up to `MEMORY_LIMIT` characters stay in memory. Beyond that everything is
 * streamed to a spill file (the full output, which the observation names) and
 * memory keeps only the head of the current segment and a rolling tail: enough
 * to build the 15,000 + 15,000 character view agents are shown.
 *
 * A *segment* is what one observation shows: the text since the previous
 * observation of the same command (soft timeouts return partial output).
 *
 * It also knows how far its text was *delivered* to a streaming caller, so text printed while no
 * caller listened (between two steps of a command) is handed to the next one: each step's chunks
 * are then exactly its segment. Undelivered text past memory is read back from the spill file.
 */
import { close as closeFd, closeSync, openSync, readSync, writeSync } from "node:fs"
import { StringDecoder } from "node:string_decoder"

const MEMORY_LIMIT = 64 * 1024
/** Both exceed half of MAX_CMD_OUTPUT_SIZE with room for trimming, so the seam is always cut away. */
const HEAD = 20_000
const TAIL = 20_000

export interface Segment {
  /** The segment, or its head + tail when the middle was only spilled to disk. */
  readonly text: string
  /** True when `text` lacks a middle part (then it is longer than the truncation limit). */
  readonly gap: boolean
}

export class CommandOutput {
  private chunks: Array<string> = []
  private memoryLength = 0
  private spillFd: number | null = null
  private total = 0
  private segmentStart = 0
  private segmentHead = ""
  private tail: Array<string> = []
  private tailLength = 0
  /** Characters (and, once spilled, the file's bytes) delivered to a listener or taken in a segment. */
  private delivered = 0
  private deliveredBytes = 0
  private spillBytes = 0

  /** Where the full output goes once it outgrows memory (created lazily). */
  readonly spillPath: string

  constructor(spillPath: string) {
    this.spillPath = spillPath
  }

  /** Characters printed since the command started. */
  get length(): number {
    return this.total
  }

  append(text: string): void {
    if (text.length === 0) return
    this.total += text.length
    if (this.spillFd === null) {
      this.chunks.push(text)
      this.memoryLength += text.length
      if (this.memoryLength > MEMORY_LIMIT) this.startSpill()
      return
    }
    this.spillBytes += writeSync(this.spillFd, text)
    if (this.segmentHead.length < HEAD) this.segmentHead += text.slice(0, HEAD - this.segmentHead.length)
    this.pushTail(text)
  }

  /** Make sure the full output is on disk (for a truncated observation) and return its path. */
  saveToFile(): string {
    if (this.spillFd === null) this.startSpill()
    return this.spillPath
  }

  /** The text since the previous call; the next segment starts now. */
  takeSegment(): Segment {
    const length = this.total - this.segmentStart
    let segment: Segment
    if (this.spillFd === null) {
      const all = this.chunks.length === 1 ? this.chunks[0]! : this.chunks.join("")
      this.chunks = [all]
      segment = { text: all.slice(all.length - length), gap: false }
    } else {
      const fromTail = Math.min(TAIL, this.tailLength, length - this.segmentHead.length)
      const tail = fromTail > 0 ? this.tailText().slice(this.tailLength - fromTail) : ""
      segment = { text: this.segmentHead + tail, gap: this.segmentHead.length + fromTail < length }
      this.segmentHead = ""
    }
    this.segmentStart = this.total
    this.markDelivered()
    return segment
  }

  /** Everything so far counts as delivered (a listener saw it as it was appended). */
  markDelivered(): void {
    this.delivered = this.total
    this.deliveredBytes = this.spillBytes
  }

  /** Hand the text appended since the last delivery to `listener`, in pieces of bounded size. */
  deliver(listener: (text: string) => void): void {
    if (this.delivered === this.total) return
    if (this.spillFd === null) {
      const all = this.chunks.length === 1 ? this.chunks[0]! : this.chunks.join("")
      this.chunks = [all]
      const text = all.slice(this.delivered)
      if (text.length > 0) listener(text)
    } else {
      const decoder = new StringDecoder("utf8")
      const buffer = Buffer.alloc(MEMORY_LIMIT)
      for (let at = this.deliveredBytes; at < this.spillBytes;) {
        const read = readSync(this.spillFd, buffer, 0, Math.min(buffer.length, this.spillBytes - at), at)
        if (read === 0) break
        at += read
        const text = decoder.write(buffer.subarray(0, read))
        if (text.length > 0) listener(text)
      }
      const rest = decoder.end()
      if (rest.length > 0) listener(rest)
    }
    this.markDelivered()
  }

  /**
   * Hand the last `count` characters of the segment just taken to the next one (a partial
   * observation's end that may begin a secret, shown once the rest of it is known).
   */
  giveBack(count: number): void {
    if (count <= 0) return
    this.segmentStart -= count
    if (this.spillFd !== null) this.segmentHead = this.tailText().slice(-count) + this.segmentHead
  }

  close(): void {
    if (this.spillFd !== null) closeSync(this.spillFd)
    this.spillFd = null
  }

  /** `close` for a finalizer, which must not block: the spill file's descriptor is closed asynchronously. */
  release(): Promise<void> {
    const fd = this.spillFd
    this.spillFd = null
    return fd === null
      ? Promise.resolve()
      : new Promise((resolve, reject) => closeFd(fd, (error) => error === null ? resolve() : reject(error)))
  }

  private startSpill(): void {
    const all = this.chunks.join("")
    this.chunks = []
    this.memoryLength = 0
    this.spillFd = openSync(this.spillPath, "w+", 0o600)
    this.deliveredBytes = Buffer.byteLength(all.slice(0, this.delivered))
    this.spillBytes = writeSync(this.spillFd, all)
    const inSegment = all.slice(all.length - (this.total - this.segmentStart))
    this.segmentHead = inSegment.slice(0, HEAD)
    this.pushTail(all.slice(Math.max(0, all.length - TAIL)))
  }

  private pushTail(text: string): void {
    this.tail.push(text)
    this.tailLength += text.length
    while (this.tail.length > 1 && this.tailLength - this.tail[0]!.length >= TAIL) {
      this.tailLength -= this.tail.shift()!.length
    }
  }

  private tailText(): string {
    const text = this.tail.join("")
    this.tail = [text]
    return text
  }
}
