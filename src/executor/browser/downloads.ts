/**
 * Files the browser downloads (spec §2.6): saved under the workspace's
 * `.downloads/`, then the newest is copied to `<workspace>/file_<n><ext>`, where
 * n counts the session's downloads and the extension is guessed from the file's
 * first bytes (OpenHands uses puremagic) or, failing that, from its name.
 */
import { closeSync, copyFileSync, existsSync, mkdirSync, openSync, readSync } from "node:fs"
import { extname, join } from "node:path"
import type { Download } from "playwright-core"
import { Wakeups } from "./wakeups.ts"

/** Signatures of common download types, checked in order. */
const MAGIC: ReadonlyArray<readonly [string, string]> = [
  ["%PDF-", ".pdf"],
  ["\x89PNG\r\n\x1a\n", ".png"],
  ["\xff\xd8\xff", ".jpg"],
  ["GIF8", ".gif"],
  ["PK\x03\x04", ".zip"],
  ["\x1f\x8b", ".gz"],
  ["RIFF", ".wav"],
  ["\x7fELF", ".elf"]
]

const guessExtension = (path: string): string => {
  const head = Buffer.alloc(16)
  const fd = openSync(path, "r")
  const read = readSync(fd, head, 0, head.length, 0)
  closeSync(fd)
  const start = head.subarray(0, read).toString("latin1")
  return MAGIC.find(([signature]) => start.startsWith(signature))?.[1] ?? extname(path)
}

/** A file name in `dir` that does not exist yet: `name`, else `name (1)`, ... */
const freeName = (dir: string, name: string): string => {
  const ext = extname(name)
  const stem = name.slice(0, name.length - ext.length)
  for (let i = 0;; i++) {
    const candidate = i === 0 ? name : `${stem} (${i})${ext}`
    if (!existsSync(join(dir, candidate))) return candidate
  }
}

export interface SavedDownload {
  /** The copy in the workspace, as the agent names it (under the mount path). */
  readonly agentPath: string
}

/** Saves the session's downloads; `root` is the workspace on disk, `mountPath` the agent's name for it. */
export class Downloads {
  #count = 0
  #pending: Array<Promise<string | null>> = []
  readonly #started = new Wakeups()

  readonly root: string
  readonly mountPath: string

  constructor(root: string, mountPath: string) {
    this.root = root
    this.mountPath = mountPath
  }

  /** Starts saving a download under `.downloads/` (awaited by `collect`). */
  track(download: Download): void {
    const dir = join(this.root, ".downloads")
    mkdirSync(dir, { recursive: true })
    const target = join(dir, freeName(dir, download.suggestedFilename() || "download"))
    this.#pending.push(download.saveAs(target).then(() => target, () => null))
    this.#started.wakeAll()
  }

  /** Resolves once a download has started (now or within `timeoutMs`). */
  arrival(timeoutMs: number): Promise<void> {
    return this.#pending.length > 0 ? Promise.resolve() : this.#started.wait(timeoutMs)
  }

  /** Waits for the downloads started so far; copies the newest into the workspace as `file_<n><ext>`. */
  async collect(): Promise<SavedDownload | null> {
    const saved = (await Promise.all(this.#pending)).filter((path) => path !== null)
    this.#pending = []
    if (saved.length === 0) return null
    this.#count += saved.length
    const source = saved.at(-1)!
    const name = `file_${this.#count}${guessExtension(source)}`
    copyFileSync(source, join(this.root, name))
    return { agentPath: join(this.mountPath, name) }
  }
}
