/**
 * `undo_edit` history. OHEditor keeps up to 10 previous contents per file (in JSON files under a
 * temp directory); one editor lives as long as its runtime, so memory serves the same purpose.
 */

/** `max_history_per_file`. */
const MAX_HISTORY_PER_FILE = 10

export class EditHistory {
  readonly #entries = new Map<string, Array<string>>()

  /** Remember `content` as the state to restore on the next undo; the oldest entry beyond 10 is dropped. */
  add(path: string, content: string): void {
    const entries = this.#entries.get(path) ?? []
    entries.push(content)
    if (entries.length > MAX_HISTORY_PER_FILE) entries.shift()
    this.#entries.set(path, entries)
  }

  /** The most recent entry, removed from the history; `undefined` when there is none. */
  pop(path: string): string | undefined {
    return this.#entries.get(path)?.pop()
  }
}
