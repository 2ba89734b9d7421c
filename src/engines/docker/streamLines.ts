/**
 * The text of the engine's build progress (`stream` events) as lines. An event carries what the
 * builder or a step printed as it came: several lines, part of one, or a line ended by `\r` (a
 * progress bar), so one event is not one line. Logging events as they are glues a warning to the
 * line after it and splits a line printed in two writes; cut here instead, at `\n`, `\r\n` or
 * `\r`, with a piece that ends no line kept until its end comes (or the build does).
 */
export interface LineSplitter {
  /** The lines `text` ends (with what was kept before it); its unended rest is kept. */
  readonly push: (text: string) => ReadonlyArray<string>
  /** The kept rest, a last line that no line end followed. */
  readonly end: () => ReadonlyArray<string>
}

export const lineSplitter = (): LineSplitter => {
  let rest = ""
  return {
    push: (text) => {
      const pieces = (rest + text).split(/\r\n|\r|\n/)
      rest = pieces.pop() ?? ""
      return pieces
    },
    end: () => {
      const last = rest
      rest = ""
      return last === "" ? [] : [last]
    }
  }
}
