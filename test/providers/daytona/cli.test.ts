/**
 * `effect-sandbox run --runtime daytona`: the real CLI (from source, a child process) on the
 * Daytona stand-in, reached through the variables DaytonaRuntime reads (`DAYTONA_API_KEY`,
 * `DAYTONA_API_URL`).
 */
import { assert, it } from "@effect/vitest"
import { runCli } from "../../cli/cliProcess.ts"
import { describeDocker } from "../../docker/infra.ts"
import { useStandIn } from "./infra.ts"

describeDocker("effect-sandbox run --runtime daytona (stand-in)", () => {
  const standIn = useStandIn()

  it("runs the command in a sandbox, exits with its code, and the sandbox is deleted when the CLI exits", async () => {
    const { apiKey, apiUrl, sandboxes } = standIn()
    const result = await runCli(["run", "--runtime", "daytona", "--", "echo \"hi from $PWD\"; exit 3"], {
      ...process.env,
      DAYTONA_API_KEY: apiKey,
      DAYTONA_API_URL: apiUrl
    })
    assert.strictEqual(result.stdout, "hi from /workspace\n", result.stderr)
    assert.strictEqual(result.status, 3)
    const made = [...sandboxes.byId.values()]
    assert.lengthOf(made, 1)
    assert.deepStrictEqual(made.map((s) => s.state), ["destroyed"])
  }, 240_000)

  it("refuses --workspace in one line, creating nothing", async () => {
    const { apiKey, apiUrl, sandboxes } = standIn()
    const before = sandboxes.byId.size
    const result = await runCli(["run", "--runtime", "daytona", "--workspace", "/tmp", "--", "true"], {
      ...process.env,
      DAYTONA_API_KEY: apiKey,
      DAYTONA_API_URL: apiUrl
    })
    assert.strictEqual(
      result.stderr,
      "effect-sandbox: Invalid DaytonaRuntime options: workspace: a host directory cannot be mounted into a Daytona"
        + " sandbox (its workspace is /workspace there): upload files with copyTo instead.\n"
    )
    assert.strictEqual(result.status, 1)
    assert.strictEqual(sandboxes.byId.size, before)
  }, 60_000)
})
