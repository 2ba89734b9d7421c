/**
 * The Jupyter messaging protocol (v5.3), as sent over ZeroMQ: a message is the
 * frames `<IDS|MSG>`, an HMAC-SHA256 signature, then the JSON header, parent
 * header, metadata and content. Signing is what lets the kernel trust us.
 */
import { createHmac, randomUUID, timingSafeEqual } from "node:crypto"

export interface Header {
  readonly msg_id: string
  readonly msg_type: string
  readonly session: string
  readonly username: string
  readonly date: string
  readonly version: string
}

export interface Message {
  readonly header: Header
  readonly parentHeader: Partial<Header>
  readonly metadata: Record<string, unknown>
  readonly content: Record<string, unknown>
}

const DELIMITER = "<IDS|MSG>"

export class Signer {
  private readonly key: string
  readonly session = randomUUID()

  constructor(key: string) {
    this.key = key
  }

  private sign(parts: ReadonlyArray<string>): string {
    const hmac = createHmac("sha256", this.key)
    for (const part of parts) hmac.update(part)
    return hmac.digest("hex")
  }

  /** The frames of a new request of type `msgType`; returns its id too (replies carry it as parent). */
  encode(msgType: string, content: Record<string, unknown>): { readonly id: string; readonly frames: Array<string> } {
    const header: Header = {
      msg_id: randomUUID(),
      msg_type: msgType,
      session: this.session,
      username: "effect-sandbox",
      date: new Date().toISOString(),
      version: "5.3"
    }
    const parts = [JSON.stringify(header), "{}", "{}", JSON.stringify(content)]
    return { id: header.msg_id, frames: [DELIMITER, this.sign(parts), ...parts] }
  }

  /** Parse received frames; `null` for a message with a bad signature (dropped, as Jupyter clients do). */
  decode(frames: ReadonlyArray<Buffer>): Message | null {
    const at = frames.findIndex((frame) => frame.toString() === DELIMITER)
    if (at === -1 || frames.length < at + 6) return null
    const parts = frames.slice(at + 2, at + 6).map((frame) => frame.toString("utf8"))
    const expected = Buffer.from(this.sign(parts))
    const given = frames[at + 1]!
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null
    return {
      header: JSON.parse(parts[0]!),
      parentHeader: JSON.parse(parts[1]!),
      metadata: JSON.parse(parts[2]!),
      content: JSON.parse(parts[3]!)
    }
  }
}
