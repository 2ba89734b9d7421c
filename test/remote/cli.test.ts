/**
 * `effect-sandbox run --runtime remote`: the real CLI (from source) against
 * `effect-sandbox-runtime-api` (test/remote/apiServer.ts), its URL from `--api-url`, its key from
 * `SANDBOX_API_KEY` as RemoteRuntime reads it, the runtime image built through the API from
 * `--image`. The runtime is stopped when the CLI exits: none of the API's containers remain.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { join } from "node:path"
import { dockerCli } from "../docker/helpers.ts"
import { baseImage, describeDocker } from "../docker/infra.ts"
import { type ApiServer, PREFIX, removeLeftovers, startApiServer } from "./apiServer.ts"

const CLI = join(import.meta.dirname, "..", "..", "src", "cli", "main.ts")
const KEY = randomBytes(16).toString("hex")

/** The CLI run to its end (the API server is a process of its own, so this one may block). */
const cli = (args: ReadonlyArray<string>) => {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    encoding: "utf8",
    env: { ...process.env, SANDBOX_API_KEY: KEY },
    timeout: 240_000
  })
  return { stdout: result.stdout, stderr: result.stderr, status: result.status }
}

describe("effect-sandbox run --api-url", () => {
  it("is refused off --runtime remote in one line", () => {
    const result = cli(["run", "--api-url", "http://127.0.0.1:9", "--", "true"])
    assert.strictEqual(
      result.stderr,
      "effect-sandbox: --api-url applies to --runtime remote only, not --runtime cli.\n"
    )
    assert.strictEqual(result.status, 1)
  }, 60_000)
})

describeDocker("effect-sandbox run --runtime remote", () => {
  let server: ApiServer | undefined
  beforeAll(async () => {
    server = await startApiServer([], KEY)
  }, 60_000)
  afterAll(async () => {
    await server?.kill()
    const left = dockerCli("ps", "-aq", "--filter", `name=${PREFIX}-`).stdout.trim()
    removeLeftovers()
    assert.strictEqual(left, "")
  })

  it("runs the command in the API's runtime and exits with its code; the runtime is stopped", () => {
    const result = cli([
      "run",
      "--runtime",
      "remote",
      "--api-url",
      server!.base,
      "--image",
      baseImage(),
      "--",
      "echo \"hi from $PWD\"; exit 3"
    ])
    assert.strictEqual(result.stdout, "hi from /workspace\n", result.stderr)
    assert.strictEqual(result.status, 3)
  }, 300_000)
})
