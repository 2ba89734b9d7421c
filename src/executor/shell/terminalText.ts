/**
 * Turns raw PTY bytes into the text a terminal would show, as tmux's
 * `capture-pane` gives OpenHands: CRLF becomes LF, colour and cursor escape
 * sequences are dropped, and a carriage return overwrites its line (progress bars
 * keep their last state). Works on a stream: a sequence split across chunks is
 * held back until complete.
 */

// CSI (ESC [ ... final), OSC (ESC ] ... BEL|ST), and two-byte escapes.
// eslint-disable-next-line no-control-regex
const ESCAPE = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|\x1b[()][0-9A-Za-z]/g
// An escape sequence that may still be incomplete at the end of a chunk.
// eslint-disable-next-line no-control-regex
const INCOMPLETE_ESCAPE_AT_END = /\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*\x1b?|[()])?$/

export class TerminalTextDecoder {
  private carry = ""

  feed(chunk: string): string {
    let text = this.carry + chunk
    this.carry = ""
    const incomplete = INCOMPLETE_ESCAPE_AT_END.exec(text)
    if (incomplete !== null && text.length - incomplete.index < 256) {
      this.carry = text.slice(incomplete.index)
      text = text.slice(0, incomplete.index)
    }
    if (text.endsWith("\r")) {
      this.carry = "\r" + this.carry
      text = text.slice(0, -1)
    }
    // Other control characters (BEL, backspace, ...) carry no text; \n, \r and \t stay.
    // eslint-disable-next-line no-control-regex
    return text.replace(ESCAPE, "").replaceAll("\r\n", "\n").replace(/[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]/g, "")
  }
}

/** Apply carriage returns the way a terminal does: each line keeps what follows its last `\r`. */
export const collapseCarriageReturns = (text: string): string =>
  text.includes("\r")
    ? text.split("\n").map((raw) => {
      const line = raw.replace(/\r+$/, "")
      return line.slice(line.lastIndexOf("\r") + 1)
    }).join("\n")
    : text
