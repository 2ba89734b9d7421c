/**
 * The workspace set-up steps (spec §8.3) on CliRuntime, with real repositories cloned from local
 * bare repositories (file:// and a dumb-HTTP server that demands the token): statuses, files on
 * disk, the session shell's directory, and the token absent from every action, observation and log.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Logger, Option, Redacted, References, Scope, Stream } from "effect"
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import {
  CliRuntime,
  cloneOrInitRepo,
  maybeRunSetupScript,
  maybeSetupGitHooks,
  PRE_COMMIT_HOOK_CONTENT,
  Runtime,
  type RuntimeStatus,
  setupGitConfig,
  WorkspaceSetupError
} from "../../src/index.ts"
import { recordingRuntime } from "./recording.ts"
import { authServer, bareRepo, git, tempDir } from "./repos.ts"

const TOKEN = "tok-9f3c2a7d1e5b"

/** A CliRuntime on a fresh workspace, with the actions and observations it sees recorded in `seen`. */
const withRuntime = <A, E>(
  f: (workspace: string, root: string, seen: Array<unknown>) => Effect.Effect<A, E, Runtime | Scope.Scope>
) =>
  Effect.gen(function*() {
    const root = yield* tempDir("oh-setup-")
    const workspace = join(root, "ws")
    mkdirSync(workspace)
    const seen: Array<unknown> = []
    return yield* f(workspace, root, seen).pipe(
      Effect.provide(recordingRuntime(seen).pipe(Layer.provide(CliRuntime.layer({ workspace }))))
    )
  }).pipe(Effect.scoped)

/** The statuses published while `effect` runs (the stream replays the history, so nothing is missed). */
const statusesDuring = <A, E>(effect: Effect.Effect<A, E, Runtime>) =>
  Effect.gen(function*() {
    const rt = yield* Runtime
    const result = yield* effect
    const all = yield* rt.status.pipe(
      Stream.take(64),
      Stream.interruptWhen(Effect.sleep("100 millis")),
      Stream.runCollect
    )
    return { result, statuses: Array.from(all) as Array<RuntimeStatus> }
  })

const sh = (command: string) => Runtime.use((rt) => rt.runCommand(command))
const out = (command: string) => Effect.map(sh(command), (obs) => obs.content.trim())

describe("cloneOrInitRepo", () => {
  it.live("clones a file:// repository into <workspace>/<name>, cds there on a new openhands-workspace- branch", () =>
    withRuntime((workspace, root) =>
      Effect.gen(function*() {
        const bare = bareRepo(root, "demo", { "README.md": "hello\n" })
        const { result, statuses } = yield* statusesDuring(cloneOrInitRepo({ repository: `file://${bare}` }))
        assert.strictEqual(result, "demo")
        assert.strictEqual(readFileSync(join(workspace, "demo", "README.md"), "utf8"), "hello\n")
        assert.strictEqual(yield* out("pwd"), join(workspace, "demo"))
        assert.match(yield* out("git branch --show-current"), /^openhands-workspace-[a-z0-9]{8}$/)
        assert.deepStrictEqual(statuses.slice(-2), ["SETTING_UP_WORKSPACE", "READY"])
      })
    ))

  it.live("checks out the branch asked for", () =>
    withRuntime((_workspace, root) =>
      Effect.gen(function*() {
        const bare = bareRepo(root, "demo", { "a.txt": "a\n" })
        assert.strictEqual(yield* cloneOrInitRepo({ repository: `file://${bare}`, branch: "feature" }), "demo")
        assert.strictEqual(yield* out("git branch --show-current"), "feature")
      })
    ))

  it.live("sends the token over HTTP through a credential helper: in no argv, action, observation, log or .git/config", () =>
    withRuntime((workspace, root, seen) =>
      Effect.gen(function*() {
        bareRepo(root, "private", { "secret.txt": "s\n" })
        const server = yield* authServer(root, "x-access-token", TOKEN)
        const logged: Array<string> = []
        const logger = Logger.make((options) => void logged.push(Logger.formatJson.log(options)))
        const name = yield* cloneOrInitRepo({ repository: `${server.url}/private.git`, token: Redacted.make(TOKEN) })
          .pipe(Effect.provide(Logger.layer([logger])), Effect.provideService(References.MinimumLogLevel, "All"))
        assert.strictEqual(name, "private")
        assert.strictEqual(readFileSync(join(workspace, "private", "secret.txt"), "utf8"), "s\n")
        assert.isTrue(server.requests.some((r) => r.startsWith("GET /private.git/info/refs") && r.endsWith("=")))
        assert.lengthOf(seen, 4)
        for (const item of [...seen, ...logged]) assert.notInclude(JSON.stringify(item), TOKEN)
        // origin is the bare URL; the helper for its origin reads $GIT_TOKEN, never holds the value.
        const config = readFileSync(join(workspace, "private", ".git", "config"), "utf8")
        assert.notInclude(config, TOKEN)
        assert.include(config, `url = ${server.url}/private.git\n`)
        assert.include(config, `[credential "${server.url}"]\n\thelper = \n\thelper = "!f() {`)
        assert.include(config, `printf 'username=%s\\\\npassword=%s\\\\n' 'x-access-token' \\"$GIT_TOKEN\\"`)
        // Later fetches through origin authenticate the same way, as in OpenHands.
        const before = server.requests.length
        assert.strictEqual((yield* sh("git fetch origin && echo fetched")).content.trim(), "fetched")
        assert.isTrue(
          server.requests.slice(before).some((r) => r.startsWith("GET /private.git/info/refs") && r.endsWith("="))
        )
      })
    ))

  it.live("without the token the HTTP clone fails at once (no prompt) with a typed error", () =>
    withRuntime((_workspace, root) =>
      Effect.gen(function*() {
        bareRepo(root, "private", { "secret.txt": "s\n" })
        const server = yield* authServer(root, "x-access-token", TOKEN)
        const error = yield* Effect.flip(cloneOrInitRepo({ repository: `${server.url}/private.git` }))
        assert.instanceOf(error, WorkspaceSetupError)
        assert.match(
          error.message,
          /^git clone failed \(exit code 128\): Cloning into '.*\/ws\/private'...\nfatal: could not read Username for 'http:\/\/127\.0\.0\.1:\d+': terminal prompts disabled$/
        )
        assert.strictEqual(yield* Runtime.use((rt) => rt.currentStatus), "READY")
      })
    ))

  it.live("refuses a token for a non-HTTP URL and a repository it cannot parse, changing nothing", () =>
    withRuntime((workspace, root) =>
      Effect.gen(function*() {
        const bare = bareRepo(root, "demo", { "a.txt": "a\n" })
        const error = yield* Effect.flip(cloneOrInitRepo({ repository: `file://${bare}`, token: Redacted.make(TOKEN) }))
        assert.strictEqual(error.message, "A token can only be sent to an http(s) repository, not file://...")
        const bad = yield* Effect.flip(cloneOrInitRepo({ repository: "not a repo" }))
        assert.strictEqual(bad.message, "Missing either Git token or valid repository")
        const nameless = yield* Effect.flip(cloneOrInitRepo({ repository: "https://user:pw@example.com/" }))
        assert.strictEqual(nameless.message, "No repository name in https://example.com/")
        assert.isFalse(existsSync(join(workspace, "demo")))
      })
    ))

  it.live("without a repository: nothing, or `git init` of the workspace with initGitInEmptyWorkspace", () =>
    withRuntime((workspace) =>
      Effect.gen(function*() {
        assert.strictEqual(yield* cloneOrInitRepo(), "")
        assert.isFalse(existsSync(join(workspace, ".git")))
        assert.strictEqual(yield* cloneOrInitRepo({ initGitInEmptyWorkspace: true }), "")
        assert.isTrue(statSync(join(workspace, ".git")).isDirectory())
      })
    ))
})

describe("maybeRunSetupScript", () => {
  it.live("sources .openhands/setup.sh in the session shell, hidden, with a 600 s timeout, under SETTING_UP_WORKSPACE", () =>
    withRuntime((workspace, _root, seen) =>
      Effect.gen(function*() {
        mkdirSync(join(workspace, ".openhands"))
        writeFileSync(
          join(workspace, ".openhands", "setup.sh"),
          "echo set-up ran > marker.txt\nexport FROM_SETUP=yes\n"
        )
        const { result, statuses } = yield* statusesDuring(maybeRunSetupScript())
        assert.deepStrictEqual(Option.map(result, (r) => r.exitCode), Option.some(0))
        assert.strictEqual(readFileSync(join(workspace, "marker.txt"), "utf8"), "set-up ran\n")
        assert.strictEqual(yield* out("echo $FROM_SETUP"), "yes")
        assert.deepStrictEqual(statuses.slice(-2), ["SETTING_UP_WORKSPACE", "READY"])
        const action = seen.find((a: any) => a?._tag === "CmdRunAction" && a.command.includes("setup.sh")) as any
        assert.strictEqual(action.command, "chmod +x .openhands/setup.sh && source .openhands/setup.sh")
        assert.strictEqual(action.timeout, 600)
        assert.isTrue(action.hidden && action.blocking)
      })
    ))

  it.live("without the script: none, and no status change", () =>
    withRuntime(() =>
      Effect.gen(function*() {
        const { result, statuses } = yield* statusesDuring(maybeRunSetupScript())
        assert.isTrue(Option.isNone(result))
        assert.notInclude(statuses, "SETTING_UP_WORKSPACE")
      })
    ))
})

describe("maybeSetupGitHooks", () => {
  it.live("installs OpenHands' hook, keeps a foreign hook as pre-commit.local, and the hook gates commits", () =>
    withRuntime((workspace) =>
      Effect.gen(function*() {
        git(workspace, "init", "-q")
        mkdirSync(join(workspace, ".openhands"))
        writeFileSync(join(workspace, ".openhands", "pre-commit.sh"), "echo checking; test ! -e forbidden\n")
        writeFileSync(join(workspace, ".git", "hooks", "pre-commit"), "#!/bin/sh\necho mine\n")
        const { result, statuses } = yield* statusesDuring(maybeSetupGitHooks())
        assert.isTrue(result)
        assert.deepStrictEqual(statuses.slice(-2), ["SETTING_UP_GIT_HOOKS", "READY"])
        const hook = join(workspace, ".git", "hooks", "pre-commit")
        assert.strictEqual(readFileSync(hook, "utf8").trimEnd(), PRE_COMMIT_HOOK_CONTENT.trimEnd())
        assert.strictEqual(statSync(hook).mode & 0o111, 0o111)
        const local = join(workspace, ".git", "hooks", "pre-commit.local")
        assert.strictEqual(readFileSync(local, "utf8"), "#!/bin/sh\necho mine\n")
        assert.strictEqual(statSync(local).mode & 0o111, 0o111)
        // A second install sees its own marker: pre-commit.local keeps the user's hook.
        assert.isTrue(yield* maybeSetupGitHooks())
        assert.strictEqual(readFileSync(local, "utf8"), "#!/bin/sh\necho mine\n")
        writeFileSync(join(workspace, "forbidden"), "x")
        git(workspace, "add", "forbidden")
        assert.throws(() => git(workspace, "commit", "-q", "-m", "blocked"))
      })
    ))

  it.live("without .openhands/pre-commit.sh: nothing installed", () =>
    withRuntime((workspace) =>
      Effect.gen(function*() {
        git(workspace, "init", "-q")
        assert.isFalse(yield* maybeSetupGitHooks())
        assert.isFalse(existsSync(join(workspace, ".git", "hooks", "pre-commit")))
      })
    ))
})

describe("setupGitConfig", () => {
  it.live("is skipped on the cli runtime (the host's own global config), as in OpenHands", () =>
    withRuntime((_workspace, _root, seen) =>
      Effect.gen(function*() {
        assert.isFalse(yield* setupGitConfig({ userName: "x" }))
        assert.lengthOf(seen, 0)
      })
    ))
})

describe("Runtime.setStatus", () => {
  it.live("publishes a status, but a released runtime stays STOPPED and keeps refusing calls", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(CliRuntime.layer(), scope)
      const rt = Context.get(context, Runtime)
      yield* rt.setStatus("SETTING_UP_WORKSPACE")
      assert.strictEqual(yield* rt.currentStatus, "SETTING_UP_WORKSPACE")
      yield* Scope.close(scope, Exit.void)
      yield* rt.setStatus("READY")
      assert.strictEqual(yield* rt.currentStatus, "STOPPED")
      assert.strictEqual((yield* Effect.flip(rt.runCommand("true")))._tag, "RuntimeDisconnectedError")
    }))
})
