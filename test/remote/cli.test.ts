/**
 * `effect-sandbox run --runtime remote`: the real CLI (from source) against
 * `effect-sandbox-runtime-api` (test/remote/apiServer.ts), its URL from `--api-url`, its key from
 * `SANDBOX_API_KEY` as RemoteRuntime reads it, the runtime image built through the API from
 * `--image`. The runtime is stopped when the CLI exits: none of the API's containers remain.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { randomBytes } from "node:crypto"
import { runCli } from "../cli/cliProcess.ts"
import { dockerCli } from "../docker/helpers.ts"
import { baseImage, describeDocker } from "../docker/infra.ts"
import { type ApiServer, PREFIX, removeLeftovers, startApiServer } from "./apiServer.ts"

const KEY = randomBytes(16).toString("hex")
const cli = (args: ReadonlyArray<string>) => runCli(args, { ...process.env, SANDBOX_API_KEY: KEY })

describe("effect-sandbox run --api-url", () => {
  it("is refused off --runtime remote in one line", async () => {
    const result = await cli(["run", "--api-url", "http://127.0.0.1:9", "--", "true"])
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

  it("runs the command in the API's runtime and exits with its code; the runtime is stopped", async () => {
    const result = await cli([
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
