/**
 * gitChanges / gitDiff / workspaceBranch and loadMicroagents on CliRuntime against real
 * repositories: OpenHands' JSON shapes, its ref choice, its child-repository rule and error names.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Logger, type Scope } from "effect"
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import {
  CliRuntime,
  gitChanges,
  gitDiff,
  GitHelperError,
  loadMicroagents,
  Microagent,
  type Runtime,
  workspaceBranch
} from "../../src/index.ts"
import { MAX_MICROAGENT_DEPTH } from "../../src/workspace/microagentFiles.ts"
import { bareRepo, git, tempDir } from "./repos.ts"

const withRuntime = <A, E>(f: (workspace: string, root: string) => Effect.Effect<A, E, Runtime | Scope.Scope>) =>
  Effect.gen(function*() {
    const root = yield* tempDir("oh-git-")
    const workspace = join(root, "ws")
    mkdirSync(workspace)
    return yield* f(workspace, root).pipe(Effect.provide(CliRuntime.layer({ workspace })))
  }).pipe(Effect.scoped)

/** A clone of a fresh bare repository (so `origin/main` exists) at `<workspace>/<name>`. */
const cloned = (root: string, workspace: string, name: string, files: Record<string, string>) => {
  git(workspace, "clone", "-q", bareRepo(root, name, files), name)
  return join(workspace, name)
}

describe("gitChanges", () => {
  it.live("M/A/D against origin/<branch>, renames as D+A, untracked as A, sorted; child repos prefixed", () =>
    withRuntime((workspace, root) =>
      Effect.gen(function*() {
        const repo = cloned(root, workspace, "app", {
          "keep.txt": "k\n",
          "edit.txt": "1\n",
          "gone.txt": "g\n",
          "old name.txt": ""
        })
        writeFileSync(join(repo, "edit.txt"), "2\n")
        rmSync(join(repo, "gone.txt"))
        writeFileSync(join(repo, "staged.txt"), "s\n")
        writeFileSync(join(repo, "untracked.txt"), "u\n")
        git(repo, "add", "staged.txt")
        git(repo, "mv", "keep.txt", "kept.txt")
        const child = cloned(root, repo, "lib", { "x.txt": "x\n" })
        writeFileSync(join(child, "x.txt"), "y\n")
        assert.deepStrictEqual(yield* gitChanges(repo), [
          { status: "M", path: "edit.txt" },
          { status: "D", path: "gone.txt" },
          { status: "D", path: "keep.txt" },
          { status: "A", path: "kept.txt" },
          { status: "M", path: "lib/x.txt" },
          { status: "A", path: "staged.txt" },
          { status: "A", path: "untracked.txt" }
        ])
      })
    ))

  it.live("a repository without origin compares with the empty tree; outside any repository: []", () =>
    withRuntime((workspace) =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* gitChanges(workspace), [])
        git(workspace, "init", "-q", "-b", "main")
        writeFileSync(join(workspace, "a.txt"), "a\n")
        git(workspace, "add", "a.txt")
        git(workspace, "commit", "-q", "-m", "one")
        writeFileSync(join(workspace, "b.txt"), "b\n")
        assert.deepStrictEqual(yield* gitChanges(workspace), [{ status: "A", path: "a.txt" }, {
          status: "A",
          path: "b.txt"
        }])
      })
    ))

  it.live("a path with a space breaks OpenHands' whitespace split: unexpected_value_in_git_diff with the lines", () =>
    withRuntime((workspace, root) =>
      Effect.gen(function*() {
        const repo = cloned(root, workspace, "app", { "two words.txt": "1\n" })
        writeFileSync(join(repo, "two words.txt"), "2\n")
        const error = yield* Effect.flip(gitChanges(repo))
        assert.instanceOf(error, GitHelperError)
        assert.strictEqual(error.message, "unexpected_value_in_git_diff:['M\\ttwo words.txt']")
      })
    ))
})

describe("gitDiff", () => {
  it.live("the file now and at the base ref; OpenHands' error names", () =>
    withRuntime((workspace, root) =>
      Effect.gen(function*() {
        const repo = cloned(root, workspace, "app", { "src/a.txt": "one\ntwo\n", "b.txt": "b\n" })
        writeFileSync(join(repo, "src", "a.txt"), "one\r\nthree\n")
        writeFileSync(join(repo, "new.txt"), "fresh\n")
        renameSync(join(repo, "b.txt"), join(repo, "c.txt"))
        assert.deepStrictEqual(yield* gitDiff("src/a.txt", repo), { modified: "one\nthree", original: "one\ntwo" })
        assert.deepStrictEqual(yield* gitDiff("a.txt", join(repo, "src")), {
          modified: "one\nthree",
          original: "one\ntwo"
        })
        assert.deepStrictEqual(yield* gitDiff("new.txt", repo), { modified: "fresh", original: "" })
        assert.deepStrictEqual(yield* gitDiff("b.txt", repo), { modified: "", original: "b" })
        writeFileSync(join(repo, "big.bin"), Buffer.alloc(1024 * 1024 + 1))
        assert.strictEqual((yield* Effect.flip(gitDiff("big.bin", repo))).message, "file_to_large")
        writeFileSync(join(workspace, "loose.txt"), "l\n")
        assert.strictEqual((yield* Effect.flip(gitDiff("loose.txt", workspace))).message, "no_repository")
        assert.strictEqual((yield* Effect.flip(gitDiff("a.txt", ""))).message, "no_dir_in_git_diff")
        assert.strictEqual(yield* workspaceBranch(repo), "main")
        assert.strictEqual(yield* workspaceBranch(workspace), undefined)
      })
    ))
})

describe("loadMicroagents", () => {
  it.live("the legacy instructions file and every .md under .openhands/microagents (README skipped)", () =>
    withRuntime((workspace) =>
      Effect.gen(function*() {
        const dir = join(workspace, "repo", ".openhands", "microagents")
        mkdirSync(join(dir, "nested"), { recursive: true })
        writeFileSync(join(workspace, "repo", ".openhands_instructions"), "Use pnpm.\n")
        writeFileSync(join(dir, "README.md"), "docs\n")
        writeFileSync(join(dir, "repo.md"), "---\nname: repo\ntype: repo\n---\n\nRun `make test`.\n")
        writeFileSync(
          join(dir, "nested", "docker.md"),
          "---\ntriggers:\n  - docker\n  - 'container'\n---\nUse podman.\n"
        )
        writeFileSync(join(dir, "plain.md"), "No front matter.\n")
        const agents = yield* loadMicroagents({ repository: "acme/repo" })
        const legacy = join(workspace, "repo", ".openhands_instructions")
        assert.deepStrictEqual(agents, [
          new Microagent({ name: "repo_legacy", type: "repo", source: legacy, content: "Use pnpm.\n", triggers: [] }),
          new Microagent({
            name: "nested/docker",
            type: "knowledge",
            source: join(dir, "nested", "docker.md"),
            content: "Use podman.",
            triggers: ["docker", "container"]
          }),
          new Microagent({
            name: "plain",
            type: "repo",
            source: join(dir, "plain.md"),
            content: "No front matter.",
            triggers: []
          }),
          new Microagent({
            name: "repo",
            type: "repo",
            source: join(dir, "repo.md"),
            content: "Run `make test`.",
            triggers: []
          })
        ])
        assert.deepStrictEqual(yield* loadMicroagents(), [])
      })
    ))

  it.live("does not follow directory links (a loop, a link out), caps the depth, and says what it skipped", () =>
    withRuntime((workspace, root) =>
      Effect.gen(function*() {
        const dir = join(workspace, ".openhands", "microagents")
        mkdirSync(join(dir, "real"), { recursive: true })
        writeFileSync(join(dir, "real", "kept.md"), "kept\n")
        symlinkSync(".", join(dir, "a"))
        mkdirSync(join(root, "outside"))
        writeFileSync(join(root, "outside", "stolen.md"), "outside\n")
        symlinkSync(join(root, "outside"), join(dir, "real", "out"))
        const deep = join(dir, ...Array.from({ length: MAX_MICROAGENT_DEPTH + 1 }, (_, i) => `d${i + 1}`))
        mkdirSync(deep, { recursive: true })
        writeFileSync(join(deep, "deep.md"), "too deep\n")
        writeFileSync(join(dirname(deep), "deepest-kept.md"), "kept\n")
        const logged: Array<string> = []
        const logger = Logger.make((options) => void logged.push(String(options.message)))
        const agents = yield* loadMicroagents().pipe(Effect.provide(Logger.layer([logger])))
        const levels = Array.from({ length: MAX_MICROAGENT_DEPTH }, (_, i) => `d${i + 1}`).join("/")
        assert.deepStrictEqual(agents.map((a) => a.name), [`${levels}/deepest-kept`, "real/kept"])
        assert.deepStrictEqual(logged.sort(), [
          `Microagents: ${dir}/${levels}/d${
            MAX_MICROAGENT_DEPTH + 1
          } is deeper than ${MAX_MICROAGENT_DEPTH} levels: skipped`,
          `Microagents: not following the directory link ${dir}/a`,
          `Microagents: not following the directory link ${dir}/real/out`
        ])
      })
    ))
})
