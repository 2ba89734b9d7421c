/**
 * `undo_edit` history. OHEditor keeps up to 10 previous contents per file (in JSON files under a
 * temp directory). The server's editor lives as long as its runtime, so memory serves the same
 * purpose; the editor that agent_skills' `file_editor` runs is a new process per call, so it keeps
 * its history in a directory (one JSON array of contents per file), as OHEditor does.
 */
import { createHash } from "node:crypto"
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"

/** `max_history_per_file`. */
const MAX_HISTORY_PER_FILE = 10

export class EditHistory {
  readonly #entries = new Map<string, Array<string>>()
  readonly #dir: string | undefined

  /** With `dir`, entries are files in that directory (created on the first edit) and outlive this object. */
  constructor(dir?: string) {
    this.#dir = dir
  }

  /** Remember `content` as the state to restore on the next undo; the oldest entry beyond 10 is dropped. */
  add(path: string, content: string): void {
    const entries = this.#load(path)
    entries.push(content)
    if (entries.length > MAX_HISTORY_PER_FILE) entries.shift()
    this.#save(path, entries)
  }

  /** The most recent entry, removed from the history; `undefined` when there is none. */
  pop(path: string): string | undefined {
    const entries = this.#load(path)
    const last = entries.pop()
    if (last !== undefined) this.#save(path, entries)
    return last
  }

  #file(path: string): string {
    return join(this.#dir!, `${createHash("sha256").update(path).digest("hex").slice(0, 32)}.json`)
  }

  #load(path: string): Array<string> {
    if (this.#dir === undefined) return this.#entries.get(path) ?? []
    try {
      const entries: unknown = JSON.parse(readFileSync(this.#file(path), "utf8"))
      return Array.isArray(entries) ? entries.filter((e): e is string => typeof e === "string") : []
    } catch {
      return []
    }
  }

  #save(path: string, entries: Array<string>): void {
    if (this.#dir === undefined) {
      this.#entries.set(path, entries)
      return
    }
    if (entries.length === 0) {
      rmSync(this.#file(path), { force: true })
      return
    }
    mkdirSync(this.#dir, { recursive: true })
    writeFileSync(this.#file(path), JSON.stringify(entries), { mode: 0o600 })
  }
}
