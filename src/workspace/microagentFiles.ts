/**
 * The microagent files of a repository: every `.md` (but README.md) under its microagent directory,
 * found through any `Runtime`'s `listFiles`. The repository is the agent's (or anyone's it
 * clones), so the walk is bounded: directory links are not entered (`a -> .` would make it recurse
 * for ever, `b -> /` would read outside the repository; OpenHands' `rglob` does not follow them
 * either), and depth and the number of directories are capped. What is skipped is logged.
 */
import { Effect } from "effect"
import { Runtime } from "../services/Runtime.ts"
import { runSetupCommand } from "./command.ts"

/** Subdirectories deeper than this are not read (the microagent directory itself is depth 0). */
export const MAX_MICROAGENT_DEPTH = 8

/** Directories listed at most: each is a round trip to the sandbox. */
export const MAX_MICROAGENT_DIRECTORIES = 256

/**
 * The symbolic links under `dir` (an existing directory), relative to it (`a`, `nested/b`), listed
 * without following any (`find -P`, in a fresh shell there). None when the sandbox has no `find`
 * or the command fails: the caps still end the walk.
 */
const linksUnder = (dir: string) =>
  runSetupCommand(`find -P . -mindepth 1 -maxdepth ${MAX_MICROAGENT_DEPTH + 1} -type l 2>/dev/null`, { cwd: dir })
    .pipe(
      Effect.map((result) =>
        result.exitCode !== 0 ? [] : result.content.split("\n").map((line) => line.trim().replace(/^\.\//, ""))
      ),
      Effect.orElseSucceed((): ReadonlyArray<string> => []),
      Effect.map((paths) => new Set(paths.filter((path) => path !== "")))
    )

/** Every `.md` under `dir` except README.md, with its path relative to `dir`, directories' files first. */
export const markdownFiles = Effect.fn("workspace.markdownFiles")(function*(dir: string) {
  const rt = yield* Runtime
  const list = (prefix: string) =>
    rt.listFiles(`${dir}/${prefix}`).pipe(Effect.orElseSucceed((): ReadonlyArray<string> => []))
  const top = yield* list("")
  // Only a directory with subdirectories can hold links to follow (and a missing one has no shell to run in).
  const links = top.some((name) => name.endsWith("/")) ? yield* linksUnder(dir) : new Set<string>()
  const found: Array<string> = []
  let listed = 1
  const visit = (prefix: string, names: ReadonlyArray<string>, depth: number): Effect.Effect<void> =>
    Effect.gen(function*() {
      for (const name of names) {
        if (!name.endsWith("/")) {
          if (name.endsWith(".md") && name !== "README.md") found.push(`${prefix}${name}`)
          continue
        }
        const sub = `${prefix}${name.slice(0, -1)}`
        if (links.has(sub)) {
          yield* Effect.logWarning(`Microagents: not following the directory link ${dir}/${sub}`)
        } else if (depth >= MAX_MICROAGENT_DEPTH) {
          yield* Effect.logWarning(`Microagents: ${dir}/${sub} is deeper than ${MAX_MICROAGENT_DEPTH} levels: skipped`)
        } else if (listed >= MAX_MICROAGENT_DIRECTORIES) {
          yield* Effect.logWarning(
            `Microagents: more than ${MAX_MICROAGENT_DIRECTORIES} directories under ${dir}: ${dir}/${sub} skipped`
          )
        } else {
          listed++
          yield* visit(`${sub}/`, yield* list(`${sub}/`), depth + 1)
        }
      }
    })
  yield* visit("", top, 0)
  return found
})
