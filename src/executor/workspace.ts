/**
 * The workspace boundary: how an agent-supplied path becomes a path on this machine.
 *
 * Agents address the workspace by a fixed mount path (OpenHands uses `/workspace`) whatever
 * directory it really lives in, so the mount path is mapped onto the real root first. In
 * restricted mode the result must stay inside the workspace (or an extra allowed directory),
 * following CLIRuntime's `_sanitize_filename` messages, with two fixes: the prefix check is
 * segment-aware (`<root>2` is outside) and symlinks of paths that do not exist yet are resolved
 * too, so a dangling link cannot be used to create a file outside.
 */
import { Data, Effect } from "effect"
import * as fs from "node:fs/promises"
import * as nodePath from "node:path"
import { type Boundary, isWithin, type Located } from "./files/safeOpen.ts"

export interface WorkspaceOptions {
  /** Absolute real path of the workspace directory on this machine. */
  readonly root: string
  /** The path agents use for it, e.g. "/workspace" (may equal `root`). */
  readonly mountPath: string
  /** Refuse paths that escape the workspace. */
  readonly restricted: boolean
  /** Other absolute directories that are always allowed (e.g. the session's output directory). */
  readonly extraAllowed?: ReadonlyArray<string>
}

export class WorkspaceViolation extends Data.TaggedError("WorkspaceViolation")<{ readonly message: string }> {}

/** Linux's MAXSYMLINKS: how many dangling links we follow before giving up. */
const MAX_LINK_HOPS = 40

/**
 * `realpath` that also accepts paths that do not exist yet (a file about to be created): the
 * deepest existing ancestor is resolved and the missing segments appended. A dangling symlink is
 * followed to its target, because writing through it would create the target.
 */
const realpathLoose = async (path: string, hops = 0): Promise<string> => {
  try {
    return await fs.realpath(path)
  } catch {
    const parent = nodePath.dirname(path)
    if (parent === path) return path
    const candidate = nodePath.join(await realpathLoose(parent, hops), nodePath.basename(path))
    const target = hops < MAX_LINK_HOPS ? await fs.readlink(candidate).catch(() => undefined) : undefined
    return target === undefined
      ? candidate
      : realpathLoose(nodePath.resolve(nodePath.dirname(candidate), target), hops + 1)
  }
}

export class Workspace {
  readonly root: string
  readonly mountPath: string
  readonly restricted: boolean
  readonly #allowed: ReadonlyArray<string>

  constructor(options: WorkspaceOptions) {
    this.root = nodePath.resolve(options.root)
    this.mountPath = nodePath.resolve(options.mountPath)
    this.restricted = options.restricted
    this.#allowed = [this.root, ...(options.extraAllowed ?? []).map((dir) => nodePath.resolve(dir))]
  }

  /**
   * Resolve an agent-supplied path: `mountPath` and `mountPath/<rest>` map onto `root`, relative
   * paths join `cwd` (the shell's real working directory). When restricted, an absolute path
   * outside the allowed directories fails with CLIRuntime's "Invalid path" message; then symlinks
   * are resolved and a result outside fails with its "Invalid path traversal" message. The
   * resolved real path is returned; it can change after the check, so file actions open it
   * through `locate` and `safeOpen` instead.
   */
  resolve(path: string, cwd: string): Effect.Effect<string, WorkspaceViolation> {
    return Effect.map(this.locate(path, cwd), (located) => located.path)
  }

  /**
   * `resolve`, and in restricted mode the boundary that what is then opened there must respect:
   * the path may change between this check and its use, so file actions open it through
   * `safeOpen`, which checks the opened file against the same directories.
   */
  locate(path: string, cwd: string): Effect.Effect<Located, WorkspaceViolation> {
    const absolute = nodePath.isAbsolute(path)
    const mapped = absolute ? this.#fromMount(path) : nodePath.resolve(cwd, path)
    if (!this.restricted) return Effect.succeed({ path: nodePath.resolve(mapped), boundary: undefined })
    if (absolute && !this.#allowed.some((dir) => isWithin(mapped, dir))) {
      return Effect.fail(
        new WorkspaceViolation({ message: `Invalid path: ${path}. You can only work with files in ${this.root}.` })
      )
    }
    return Effect.promise(() =>
      Promise.all([
        realpathLoose(nodePath.resolve(mapped)),
        Promise.all(this.#allowed.map((dir) => realpathLoose(dir)))
      ])
    ).pipe(
      Effect.flatMap(([resolved, allowed]) => {
        const boundary: Boundary = { allowed, outside: (real) => this.#traversal(path, real) }
        return allowed.some((dir) => isWithin(resolved, dir))
          ? Effect.succeed({ path: resolved, boundary })
          : Effect.fail(new WorkspaceViolation({ message: this.#traversal(path, resolved) }))
      })
    )
  }

  #traversal(path: string, resolved: string): string {
    return `Invalid path traversal: ${path}. Path resolves outside the workspace. Resolved: ${resolved}, Workspace: ${this.root}`
  }

  #fromMount(path: string): string {
    if (!isWithin(path, this.mountPath)) return path
    const rest = path.slice(this.mountPath.length)
    return rest === "" || rest.startsWith(nodePath.sep) ? this.root + rest : this.root + nodePath.sep + rest
  }
}
