/**
 * The set-up steps are Runtime operations: the same code over HTTP on LocalRuntime (its action
 * server), including `git config` that the cli runtime skips (pointed at a temporary global config).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { cloneOrInitRepo, gitChanges, gitDiff, Runtime, setupInitialEnv } from "../../src/index.ts"
import { LocalRuntime } from "../../src/local.ts"
import { bareRepo, tempDir } from "./repos.ts"

describe("workspace set-up on LocalRuntime", () => {
  it.live("initial env, git config, clone, changes and diff go over the action server", () =>
    Effect.gen(function*() {
      const root = yield* tempDir("oh-local-setup-")
      const workspace = join(root, "ws")
      mkdirSync(workspace)
      const globalConfig = join(root, "gitconfig")
      yield* Effect.gen(function*() {
        const rt = yield* Runtime
        assert.strictEqual(rt.info.kind, "local")
        yield* setupInitialEnv({
          envVars: { GIT_CONFIG_GLOBAL: globalConfig },
          runtimeStartupEnvVars: { STARTUP_FLAG: "on" },
          userName: "Ada Lovelace"
        })
        assert.strictEqual(
          readFileSync(globalConfig, "utf8"),
          "[user]\n\tname = Ada Lovelace\n\temail = openhands@all-hands.dev\n"
        )
        assert.strictEqual((yield* rt.runCommand("echo $STARTUP_FLAG")).content, "on")
        const name = yield* cloneOrInitRepo({ repository: `file://${bareRepo(root, "svc", { "a.txt": "a\n" })}` })
        const repo = join(workspace, name)
        writeFileSync(join(repo, "a.txt"), "b\n")
        assert.deepStrictEqual(yield* gitChanges(repo), [{ status: "M", path: "a.txt" }])
        assert.deepStrictEqual(yield* gitDiff("a.txt", repo), { modified: "b", original: "a" })
      }).pipe(Effect.provide(LocalRuntime.layer({ workspace })))
    }).pipe(Effect.scoped), 60_000)
})
