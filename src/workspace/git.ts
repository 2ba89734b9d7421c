/**
 * OpenHands' git helpers (`GitHandler`, `git_changes.py`, `git_diff.py`; spec §8.3) re-written for
 * any `Runtime`: a shell script gathers git's answers in the sandbox in one static command, this
 * module applies OpenHands' rules to them and returns OpenHands' JSON shapes.
 */
import { Effect, Schema } from "effect"
import { splitlines, strip } from "../executor/editor/python.ts"
import { pythonRepr } from "../quoting/pythonRepr.ts"
import { shellQuote } from "../quoting/shellQuote.ts"
import { runSetupCommand } from "./command.ts"
import { GitHelperError } from "./errors.ts"
import { GIT_CHANGES_SCRIPT, GIT_DIFF_SCRIPT } from "./gitScripts.ts"

/** One changed file, as OpenHands' `get_git_changes` reports it. */
export const GitChange = Schema.Struct({
  status: Schema.Literals(["M", "A", "D", "U"]),
  /** Relative to the directory asked about (`<child repo>/<path>` for a child repository). */
  path: Schema.String
})
export type GitChange = typeof GitChange.Type

/** A file now (`modified`) and at the repository's base ref (`original`), as `get_git_diff` returns it. */
export const GitDiff = Schema.Struct({ modified: Schema.String, original: Schema.String })
export type GitDiff = typeof GitDiff.Type

/** The `@@OH <key> <base64>` lines a git script printed, in order. */
const records = (content: string): Array<{ readonly key: string; readonly value: string }> =>
  content.split("\n").flatMap((line) => {
    const match = /^@@OH (\w+) ?(\S*)\r?$/.exec(line)
    return match === null ? [] : [{ key: match[1]!, value: Buffer.from(match[2]!, "base64").toString("utf8") }]
  })

/** Python's `repr` of a list of strings, as OpenHands' error texts embed `changed_files`. */
const pyStrList = (items: ReadonlyArray<string>) => `[${items.map(pythonRepr).join(", ")}]`

/** `git diff --name-status` lines to changes: renames are a delete and an add, copies an add. */
const parseNameStatus = (output: string): Array<GitChange> => {
  const lines = splitlines(output)
  const changes: Array<GitChange> = []
  const fail = (what: string) => new GitHelperError({ message: `${what}:${pyStrList(lines)}` })
  for (const line of lines) {
    const parts = line.trim().split(/\s+/).filter((p) => p !== "")
    if (parts.length < 2) throw fail("unexpected_value_in_git_diff")
    const status = parts[0]!
    if (status.startsWith("R") && parts.length === 3) {
      changes.push({ status: "D", path: parts[1]! }, { status: "A", path: parts[2]! })
      continue
    }
    if (status.startsWith("C") && parts.length === 3) {
      changes.push({ status: "A", path: parts[2]! })
      continue
    }
    if (parts.length !== 2) throw fail("unexpected_value_in_git_diff")
    const normal = status === "??" ? "A" : status === "*" ? "M" : status
    if (normal !== "M" && normal !== "A" && normal !== "D" && normal !== "U") {
      throw fail("unexpected_status_in_git_diff")
    }
    changes.push({ status: normal, path: parts[1]! })
  }
  return changes
}

/** Changes of every repository in the script's output, OpenHands' rules for child repositories applied. */
const collectChanges = (content: string): Array<GitChange> => {
  const children: Array<string> = []
  const byRepo = new Map<string, Array<GitChange>>()
  let repo = "."
  for (const { key, value } of records(content)) {
    if (key === "error") throw new GitHelperError({ message: value })
    if (key === "child") children.push(value)
    if (key === "repo") {
      repo = value
      byRepo.set(repo, [])
    }
    if (key === "diff") byRepo.get(repo)!.push(...parseNameStatus(value))
    if (key === "untracked") {
      byRepo.get(repo)!.push(
        ...splitlines(value).filter((p) => p !== "").map((path) => ({ status: "A" as const, path }))
      )
    }
  }
  // As OpenHands: a plain prefix test, so a child `lib` also hides the parent's `library.txt`.
  const changes = (byRepo.get(".") ?? []).filter((c) => !children.some((dir) => c.path.startsWith(dir)))
  for (const dir of children) {
    for (const c of byRepo.get(dir) ?? []) changes.push({ status: c.status, path: `${dir}/${c.path}` })
  }
  return changes.sort((a, b) => a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
}

/**
 * Files changed in the repository at `cwd` (and its direct child repositories) against the first
 * valid ref of `origin/<branch>`, the merge base with origin's default branch, that branch, or the
 * empty tree; untracked files count as added. Sorted by path; `[]` outside a repository.
 */
export const gitChanges = Effect.fn("workspace.gitChanges")(function*(cwd: string) {
  const result = yield* runSetupCommand(GIT_CHANGES_SCRIPT, { cwd })
  if (result.exitCode !== 0) {
    return yield* new GitHelperError({ message: `error_running_cmd:${result.exitCode}:${result.content}` })
  }
  return yield* Effect.try({
    try: () => collectChanges(result.content),
    catch: (e) => e instanceof GitHelperError ? e : new GitHelperError({ message: String(e) })
  })
})

/**
 * `path` (relative to `cwd`) now and at its repository's base ref (as `gitChanges` picks it).
 * Fails with OpenHands' names: `no_dir_in_git_diff` (empty `cwd`), `file_to_large` (over 1 MiB),
 * `no_repository`, `error_in_git_diff`.
 */
export const gitDiff = Effect.fn("workspace.gitDiff")(function*(path: string, cwd: string) {
  if (cwd === "") return yield* new GitHelperError({ message: "no_dir_in_git_diff" })
  const result = yield* runSetupCommand(`OH_FILE=${shellQuote(path)}\n${GIT_DIFF_SCRIPT}`, { cwd })
  const found = new Map(records(result.content).map(({ key, value }) => [key, value]))
  const error = found.get("error")
  if (error !== undefined) return yield* new GitHelperError({ message: error })
  const modified = found.get("modified")
  const original = found.get("original")
  if (result.exitCode !== 0 || modified === undefined || original === undefined) {
    return yield* new GitHelperError({ message: "error_in_git_diff" })
  }
  return { modified: splitlines(modified).join("\n"), original: strip(original) } satisfies GitDiff
})

/** OpenHands' `get_workspace_branch`: `git branch --show-current` in `cwd`; none when detached or no repository. */
export const workspaceBranch = Effect.fn("workspace.workspaceBranch")(function*(cwd: string) {
  const result = yield* runSetupCommand("git branch --show-current", { cwd })
  const branch = result.content.trim()
  return result.exitCode === 0 && branch !== "" ? branch : undefined
})
