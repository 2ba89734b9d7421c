/**
 * One output stream of a named shell (devboxes.ts), which runs its commands in turn and prints a
 * mark after each: the text between two marks is the output of one command, passed on as it comes
 * (so an execution's output can be read and streamed while it runs, as Runloop's can), and each
 * mark's line is handed over once whole. A mark opens with a NUL byte, which no text a command
 * prints ends with, so nothing but a part of a mark is ever held back.
 */
export const markedOutput = (
  mark: string,
  onText: (text: string) => void,
  onMark: (line: string) => void
): (chunk: string) => void => {
  const opening = `\0${mark} `
  let held = ""
  return (chunk) => {
    let text = held + chunk
    for (let at = text.indexOf(opening); at >= 0; at = text.indexOf(opening)) {
      const end = text.indexOf("\n", at)
      if (at > 0) onText(text.slice(0, at))
      if (end < 0) {
        held = text.slice(at)
        return
      }
      onMark(text.slice(at + opening.length, end))
      text = text.slice(end + 1)
    }
    // What could be the start of a mark waits for the next chunk.
    let keep = Math.min(text.length, opening.length - 1)
    while (keep > 0 && !opening.startsWith(text.slice(text.length - keep))) keep--
    if (text.length > keep) onText(text.slice(0, text.length - keep))
    held = text.slice(text.length - keep)
  }
}
