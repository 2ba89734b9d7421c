/**
 * The published package works from another project: `npm install <path>` then
 * `import { Runtime, CliRuntime, CmdRunAction } from "effect-sandbox"`.
 * Packing runs the package's `prepare` (the build), so this test is slow (~15 s).
 */
import { assert, describe, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"

const root = resolve(import.meta.dirname, "..")

describe("package", () => {
  it("installs by path and imports from a scratch project", () => {
    const scratch = mkdtempSync(join(tmpdir(), "effect-sandbox-consumer-"))
    try {
      writeFileSync(join(scratch, "package.json"), JSON.stringify({ name: "consumer", type: "module", private: true }))
      // --install-links packs the directory as `npm publish` would (running `prepare`) and installs
      // its dependencies and the `effect` peer, so the consumer has exactly one Effect.
      execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--install-links", root], {
        cwd: scratch,
        stdio: "pipe"
      })
      writeFileSync(
        join(scratch, "main.js"),
        `import { Effect } from "effect"
import { CliRuntime, CmdRunAction, LocalRuntime, Runtime } from "effect-sandbox"
const program = (name) => Effect.gen(function*() {
  const rt = yield* Runtime
  const obs = yield* rt.run(new CmdRunAction({ command: "echo " + name + "-ok" }))
  console.log(obs.content)
})
await Effect.runPromise(program("cli").pipe(Effect.provide(CliRuntime.layer())))
// LocalRuntime runs the installed package's bundled server payload.
await Effect.runPromise(program("local").pipe(Effect.provide(LocalRuntime.layer())))
`
      )
      const out = execFileSync(process.execPath, ["main.js"], { cwd: scratch, encoding: "utf8" })
      assert.strictEqual(out.trim(), "cli-ok\nlocal-ok")
    } finally {
      rmSync(scratch, { recursive: true, force: true })
    }
  }, 180_000)
})
