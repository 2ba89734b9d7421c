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
import { chromiumAvailable } from "./conformance/chromium.ts"
import { kernelAvailable } from "./conformance/kernel.ts"

const root = resolve(import.meta.dirname, "..")
/** agent_skills' file_editor, from the built package (dist/ for CliRuntime, payload/ for LocalRuntime's server). */
const SKILLS_CELL = "import json\nprint(json.loads(file_editor('view', '/no-such-file').split('\\n')[1])['error'])"
const SKILLS_ERROR =
  "Invalid `path` parameter: /no-such-file. The path /no-such-file does not exist. Please provide a valid path."

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
import { CliRuntime, CmdRunAction, IPythonRunCellAction, LocalRuntime, Runtime } from "effect-sandbox"
const program = (name) => Effect.gen(function*() {
  const rt = yield* Runtime
  const obs = yield* rt.run(new CmdRunAction({ command: "echo " + name + "-ok" }))
  console.log(obs.content)
})
await Effect.runPromise(program("cli").pipe(Effect.provide(CliRuntime.layer())))
// LocalRuntime runs the installed package's bundled server payload.
await Effect.runPromise(program("local").pipe(Effect.provide(LocalRuntime.layer())))
const skills = Effect.gen(function*() {
  const rt = yield* Runtime
  const obs = yield* rt.runIPython(new IPythonRunCellAction({ code: ${
          JSON.stringify(SKILLS_CELL)
        }, includeExtra: false }))
  console.log(obs.content)
})
if (process.argv.includes("skills")) {
  await Effect.runPromise(skills.pipe(Effect.provide(CliRuntime.layer({ ipython: true }))))
  await Effect.runPromise(skills.pipe(Effect.provide(LocalRuntime.layer({ plugins: ["agent_skills", "jupyter"] }))))
}
// The browser: Playwright from dependencies (CliRuntime) and from the payload (LocalRuntime's server).
const browse = Effect.gen(function*() {
  const rt = yield* Runtime
  const obs = yield* rt.browse("data:text/html,<h1>Packed page</h1>")
  console.log(obs.content.split("\\n")[2])
})
if (process.argv.includes("browser")) {
  await Effect.runPromise(browse.pipe(Effect.provide(CliRuntime.layer({ browser: true }))))
  await Effect.runPromise(browse.pipe(Effect.provide(LocalRuntime.layer({ browser: true }))))
}
`
      )
      const withSkills = kernelAvailable()
      const withBrowser = chromiumAvailable()
      const args = [...(withSkills ? ["skills"] : []), ...(withBrowser ? ["browser"] : [])]
      const out = execFileSync(process.execPath, ["main.js", ...args], {
        cwd: scratch,
        encoding: "utf8"
      })
      assert.strictEqual(
        out.trim(),
        [
          "cli-ok",
          "local-ok",
          ...(withSkills ? [SKILLS_ERROR, SKILLS_ERROR] : []),
          ...(withBrowser ? ["# Packed page", "# Packed page"] : [])
        ].join("\n")
      )
    } finally {
      rmSync(scratch, { recursive: true, force: true })
    }
  }, 180_000)
})
