/**
 * The examples run as their headers say (`npm start`, `npm run example:docker`, `npm run
 * example:promise`: Node 24 from the dev dependencies), to their end, printing what they show. Every
 * file in examples/ has a case here, so a new example is run too.
 */
import { assert, describe, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { required } from "./conformance/requirement.ts"
import { baseImage, engineAnswers } from "./docker/infra.ts"

const root = resolve(import.meta.dirname, "..")
const scripts = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  readonly scripts: Record<string, string>
}).scripts

/** Run an example as its npm script does; its stdout. */
const runExample = (file: string, env: Record<string, string> = {}) => {
  const script = Object.entries(scripts).find(([, command]) => command === `node examples/${file}`)
  assert.isDefined(script, `no npm script runs examples/${file}`)
  return execFileSync(process.execPath, [join("examples", file)], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, ...env },
    timeout: 240_000
  })
}

/** Each example, and what its output must hold (lines of it). */
const EXAMPLES: Record<string, { readonly docker: boolean; readonly lines: ReadonlyArray<string> }> = {
  "demo.ts": {
    docker: false,
    lines: ["Hello world", "token is <redacted>", "tick 1", "[status] READY"]
  },
  "docker.ts": {
    docker: true,
    lines: [
      "$ bash /workspace/app.sh",
      "paused (docker pause); resuming...",
      "after resume: echo hello from $(hostname)"
    ]
  },
  "promise.ts": {
    docker: false,
    lines: [
      "a local sandbox",
      "stdout: hello from Linux",
      "stderr: warning",
      "exit code 3, timed out: false",
      "read back: \"no trailing newline\"",
      "workspace: notes.txt",
      "FileError: File not found: <workspace>/missing.txt. Your current working directory is <workspace>.",
      "closed"
    ]
  }
}

describe("examples/", () => {
  it("every example has a case here", () => {
    assert.deepStrictEqual(readdirSync(join(root, "examples")).sort(), Object.keys(EXAMPLES).sort())
  })

  const withDocker = required(engineAnswers(), {
    ci: "examples/docker.ts runs in CI: it needs a running Docker engine.",
    skipped: "examples/docker.ts not run (no Docker engine answers `docker info`)."
  })
  for (const [file, { docker, lines }] of Object.entries(EXAMPLES)) {
    it.skipIf(docker && !withDocker)(`${file} runs to its end`, () => {
      const output = runExample(file, docker ? { EFFECT_SANDBOX_BASE_IMAGE: baseImage() } : {}).split("\n")
      for (const line of lines) assert.include(output, line, `${file} printed no line ${JSON.stringify(line)}`)
    }, 300_000)
  }
})
