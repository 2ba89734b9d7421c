/**
 * `effect-sandbox run` with `--runtime` and `--image`: the real CLI (from source),
 * its stdout, stderr and exit code; on Docker, the container it made is gone
 * when it exits.
 */
import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { baseImage, containersWithLabel, describeDocker } from "../docker/infra.ts"

const CLI = join(import.meta.dirname, "..", "..", "src", "cli", "main.ts")

/** Run the CLI to its end. */
const cli = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = process.env) => {
  const result = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", env, timeout: 240_000 })
  return { stdout: result.stdout, stderr: result.stderr, status: result.status, pid: result.pid }
}

describe("effect-sandbox run", () => {
  it("runs on --runtime local, the exit code being the command's", () => {
    const result = cli(["run", "--runtime", "local", "--", "echo hi; exit 3"])
    assert.strictEqual(result.stdout, "hi\n", result.stderr)
    assert.strictEqual(result.status, 3)
  }, 60_000)

  it("says on stderr which runtime and workspace it runs in; stdout is the command's output", () => {
    const workspace = mkdtempSync(join(tmpdir(), "effect-sandbox-run-"))
    try {
      const result = cli(["run", "--workspace", workspace, "--", "pwd"])
      assert.strictEqual(result.stdout, `${workspace}\n`, result.stderr)
      assert.strictEqual(result.stderr, `effect-sandbox run (cli runtime, workspace ${workspace})\n`)
      assert.strictEqual(result.status, 0)
    } finally {
      rmSync(workspace, { recursive: true, force: true })
    }
  }, 60_000)

  it("refuses --image on a runtime that builds no image (cli), in one line, running nothing", () => {
    const result = cli(["run", "--image", "debian:12", "--", "touch /tmp/never"])
    assert.strictEqual(
      result.stderr,
      "effect-sandbox: --image applies to --runtime docker, kubernetes, remote only, not --runtime cli.\n"
    )
    assert.strictEqual(result.stdout, "")
    assert.strictEqual(result.status, 1)
  }, 60_000)

  it("refuses --timeout 0 in one line, running nothing", () => {
    const never = join(tmpdir(), `effect-sandbox-never-${process.pid}`)
    const result = cli(["run", "--timeout", "0", "--", `touch ${never}`])
    assert.strictEqual(
      result.stderr,
      "effect-sandbox: Invalid CmdRunAction: timeout: Expected a value greater than 0\n"
    )
    assert.strictEqual(result.stdout, "")
    assert.strictEqual(result.status, 1)
    assert.isFalse(existsSync(never))
  }, 60_000)

  it("names the runtimes it knows when given another", () => {
    const result = cli(["run", "--runtime", "kvm", "--", "true"])
    assert.notStrictEqual(result.status, 0)
    assert.include(
      result.stdout + result.stderr,
      "cli, local, docker, kubernetes, e2b, daytona, modal, runloop, remote"
    )
  }, 60_000)
})

describeDocker("effect-sandbox run --runtime docker", () => {
  const image = baseImage()

  it("runs in a container of --image, removed when the CLI exits", () => {
    const result = cli([
      "run",
      "--runtime",
      "docker",
      "--image",
      image,
      "--",
      "echo hi from $(cat /etc/hostname | wc -c) && test -f /.dockerenv"
    ])
    assert.strictEqual(result.status, 0, result.stderr)
    assert.match(result.stdout, /^hi from \d+\n$/)
    assert.deepStrictEqual(containersWithLabel(`effect-sandbox.owner.pid=${result.pid}`), [])
  }, 240_000)

  it("takes the image from SANDBOX_BASE_CONTAINER_IMAGE without --image", () => {
    const result = cli(["run", "--runtime", "docker", "--", "test -f /.dockerenv && echo in-docker"], {
      ...process.env,
      SANDBOX_BASE_CONTAINER_IMAGE: image
    })
    assert.strictEqual(result.stdout, "in-docker\n", result.stderr)
    assert.strictEqual(result.status, 0)
  }, 240_000)

  it("reports an image that does not exist (nor can be pulled) in one line, after the start's progress", () => {
    const result = cli(["run", "--runtime", "docker", "--image", "effect-sandbox-test/no-such-image:0", "--", "true"])
    assert.strictEqual(result.status, 1)
    // Piped: a plain line per phase, then the error's one line.
    const lines = result.stderr.split("\n")
    assert.deepStrictEqual(lines.slice(0, -2).map((line) => line.replace(/^\[\d+\.\ds\] /, "")), [
      "creating the Docker container",
      "pulling effect-sandbox-test/no-such-image:0"
    ])
    assert.match(
      lines.at(-2)!,
      /^effect-sandbox: The base image effect-sandbox-test\/no-such-image:0 is not on this engine/
    )
    assert.strictEqual(lines.at(-1), "")
  }, 240_000)

  it("without --image, on an engine lacking the base image, names the options that choose another", () => {
    const missing = `effect-sandbox-test/no-such-base:${process.pid}`
    const result = cli(["run", "--runtime", "docker", "--", "true"], {
      ...process.env,
      SANDBOX_BASE_CONTAINER_IMAGE: missing
    })
    assert.strictEqual(result.status, 1)
    assert.strictEqual(result.stdout, "")
    const error = result.stderr.split("\n").at(-2)!
    assert.include(error, `The base image ${missing} is not on this engine and could not be pulled (`)
    assert.include(
      error,
      "Choose another with --image (the CLI), baseImage (the runtime's options) or SANDBOX_BASE_CONTAINER_IMAGE"
    )
    assert.match(error, /This engine has: .+\.$/)
  }, 240_000)
})
