/**
 * The Promise API (`effect-sandbox/promise`) on CliRuntime, LocalRuntime and DockerRuntime: exact
 * outputs and exit codes, files exactly as written on disk, typed failures thrown as
 * `SandboxError`s, and nothing left behind after `close()`, after `await using`, or when the caller
 * forgets to close and the process exits or is stopped by a signal.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { FileError, Sandbox, SandboxError } from "../../src/promise.ts"
import { required } from "../conformance/requirement.ts"
import { hostWorkspace, removeLeftovers, sessionContainers, sessionId } from "../docker/helpers.ts"
import { baseImage, engineAnswers } from "../docker/infra.ts"
import { eventually } from "../eventually.ts"

const FILE = "promise"

/** Whether a host process lives (a zombie counts as gone: it only waits to be reaped). */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, "utf8") : ""
  return stat !== "" && stat.split(") ")[1]?.[0] !== "Z"
}

const waitFor = (what: string, check: () => boolean, withinMs = 10_000) =>
  Effect.runPromise(eventually(what, check, withinMs, 100))

/** The rejection of a promise that must reject. */
const rejection = async (promise: Promise<unknown>): Promise<unknown> => {
  try {
    await promise
  } catch (error) {
    return error
  }
  return assert.fail("expected a rejection")
}

interface Target {
  readonly name: "cli" | "local" | "docker"
  /** Options for a sandbox, and how to tell that nothing of it is left. */
  readonly setup: () => {
    readonly options: Record<string, unknown>
    /** The host directory that is the sandbox's workspace. */
    readonly hostDir: (sandbox: Sandbox) => Promise<string>
    /** Whether what the sandbox made is gone: its temporary workspace (when known), its container. */
    readonly gone: (hostDir: string | undefined) => boolean
    readonly cleanup: () => void
  }
  /** The sandbox's processes and workspace are this machine's (its pids and `info.workspace`). */
  readonly onThisHost: boolean
}

const onHost = (name: "cli" | "local"): Target => ({
  name,
  onThisHost: true,
  setup: () => ({
    options: {},
    hostDir: async (sandbox) => sandbox.info.workspace,
    gone: (dir) => dir === undefined || !existsSync(dir),
    cleanup: () => undefined
  })
})

const docker: Target = {
  name: "docker",
  onThisHost: false,
  setup: () => {
    const session = sessionId(FILE)
    return {
      options: { baseImage: baseImage(), sessionId: session },
      hostDir: () => Effect.runPromise(hostWorkspace(session)),
      gone: (dir) => sessionContainers(session).length === 0 && (dir === undefined || !existsSync(dir)),
      cleanup: () => removeLeftovers(FILE)
    }
  }
}

const withDocker = required(engineAnswers(), {
  ci: "The Promise API is tested on DockerRuntime in CI: it needs a running Docker engine.",
  skipped: "Promise API: DockerRuntime not tried (no Docker engine answers `docker info`)."
})

const TARGETS = [onHost("cli"), onHost("local"), ...(withDocker ? [docker] : [])]

const FORGOTTEN = join(import.meta.dirname, "fixtures", "forgotten.ts")

/** Run the forgetful program to its first line; `signal`: stop it with SIGTERM then. */
const forgetful = (target: Target, options: Record<string, unknown>, end: "exit" | "signal") =>
  new Promise<{ readonly workspace: string; readonly pid: number; readonly exit: string }>((resolve, reject) => {
    const child = execFile(process.execPath, [FORGOTTEN, target.name, JSON.stringify(options), end], {
      encoding: "utf8"
    })
    let out = ""
    child.stdout!.on("data", (data: string) => {
      out += data
      if (end === "signal" && out.includes("\n")) child.kill("SIGTERM")
    })
    child.on("error", reject)
    child.on("exit", (code, signal) => {
      const line = out.split("\n")[0]
      if (line === undefined || line === "") return reject(new Error(`no line from the program (exit ${code})`))
      resolve({ ...JSON.parse(line), exit: signal ?? String(code) })
    })
  })

for (const target of TARGETS) {
  describe(`Promise API on ${target.name}`, () => {
    it("runs commands: stdout and stderr apart, exit codes, stdin, a time-out that kills", async () => {
      const { options, cleanup } = target.setup()
      try {
        await using sandbox = await Sandbox.create(target.name, options)
        const pieces = { stdout: [] as Array<string>, stderr: [] as Array<string> }
        const result = await sandbox.commands.run("echo one; echo two >&2; printf three; exit 3", {
          onStdout: (text) => pieces.stdout.push(text),
          onStderr: (text) => pieces.stderr.push(text)
        })
        assert.deepStrictEqual(result, {
          stdout: "one\nthree",
          stderr: "two\n",
          exitCode: 3,
          timedOut: false,
          truncated: false
        })
        assert.strictEqual(pieces.stdout.join(""), "one\nthree")
        assert.strictEqual(pieces.stderr.join(""), "two\n")

        const cat = await sandbox.commands.run("cat; pwd", { stdin: "a\nb" })
        assert.strictEqual(cat.stdout, `a\nb${sandbox.info.workspace}\n`)
        assert.strictEqual((await sandbox.commands.run("kill -9 $$")).exitCode, 137)
        const cut = await sandbox.commands.run("printf 0123456789abc", { maxOutputLength: 10 })
        assert.deepStrictEqual([cut.stdout, cut.truncated], ["0123456789", true])

        // The time-out kills the command and what it started: its child no longer runs.
        const slow = await sandbox.commands.run("sleep 300 & echo $! > child.pid; wait", { timeout: 0.5 })
        assert.deepStrictEqual(slow, { stdout: "", stderr: "", exitCode: null, timedOut: true, truncated: false })
        const child = (await sandbox.files.read("child.pid")).trim()
        // Gone, or a zombie its new parent has yet to reap; polled, as the kill is a signal on its way.
        const probe = await sandbox.commands.run(
          `for _ in $(seq 100); do s=$(sed 's/.*) //' /proc/${child}/stat 2>/dev/null | cut -c1);` +
            ` if [ -z "$s" ] || [ "$s" = Z ]; then echo gone; exit; fi; sleep 0.1; done; echo running`
        )
        assert.strictEqual(probe.stdout, "gone\n")
      } finally {
        cleanup()
      }
    }, 120_000)

    it("writes and reads files exactly, lists them, and throws a FileError for a missing one", async () => {
      const { options, hostDir, cleanup } = target.setup()
      try {
        await using sandbox = await Sandbox.create(target.name, options)
        await sandbox.files.write("notes/a.txt", "no trailing newline")
        await sandbox.files.write(`${sandbox.info.workspace}/b.txt`, "two\nlines\n")
        await sandbox.files.write("notes/a.txt", "replaced")
        const disk = await hostDir(sandbox)
        assert.strictEqual(readFileSync(join(disk, "notes", "a.txt"), "utf8"), "replaced")
        assert.strictEqual(readFileSync(join(disk, "b.txt"), "utf8"), "two\nlines\n")
        assert.strictEqual(await sandbox.files.read("notes/a.txt"), "replaced")
        assert.strictEqual(await sandbox.files.read("b.txt"), "two\nlines\n")
        assert.deepStrictEqual(await sandbox.files.list(), ["notes/", "b.txt"])
        assert.deepStrictEqual(await sandbox.files.list("notes"), ["a.txt"])

        const error = await rejection(sandbox.files.read("missing.txt"))
        assert.instanceOf(error, SandboxError)
        assert.instanceOf(error, Error)
        const failure = error as SandboxError
        assert.strictEqual(failure._tag, "FileError")
        assert.instanceOf(failure.cause, FileError)
        assert.strictEqual(
          failure.message,
          `File not found: ${sandbox.info.workspace}/missing.txt. Your current working directory is ${sandbox.info.workspace}.`
        )
      } finally {
        cleanup()
      }
    }, 120_000)

    it("close() removes what the sandbox made; later calls throw RuntimeDisconnectedError", async () => {
      const { options, hostDir, gone, cleanup } = target.setup()
      try {
        const sandbox = await Sandbox.create(target.name, options)
        const dir = await hostDir(sandbox)
        const started = await sandbox.commands.run("setsid sleep 300 >/dev/null 2>&1 < /dev/null & echo $!")
        const pid = Number(started.stdout.trim())
        await sandbox.close()
        await sandbox.close()
        assert.isTrue(gone(dir), "the temporary workspace and the container are gone")
        if (target.onThisHost) assert.isFalse(alive(pid), "the process that left its session is killed")
        const error = await rejection(sandbox.commands.run("echo late"))
        assert.strictEqual((error as SandboxError)._tag, "RuntimeDisconnectedError")
      } finally {
        cleanup()
      }
    }, 120_000)

    for (const end of ["exit", "signal"] as const) {
      it(
        `a sandbox never closed is removed when its process ${end === "exit" ? "exits" : "gets SIGTERM"}`,
        async () => {
          const { options, gone, cleanup } = target.setup()
          try {
            const left = await forgetful(target, options, end)
            assert.strictEqual(left.exit, end === "exit" ? "0" : "SIGTERM")
            if (target.onThisHost) await waitFor(`pid ${left.pid} is killed`, () => !alive(left.pid))
            // Docker's orphan goes once the lease's watchdog sees its owner's end of the pipe close and reaps it.
            await waitFor(
              "the workspace or container is removed",
              () => gone(target.onThisHost ? left.workspace : undefined),
              60_000
            )
          } finally {
            cleanup()
          }
        },
        120_000
      )
    }
  })
}

describe("Promise API: failures to start", () => {
  it("bad options and unknown runtimes throw SandboxError with the typed error as cause", async () => {
    const bad = await rejection(Sandbox.create("cli", { noChangeTimeoutSeconds: 0 }))
    assert.instanceOf(bad, SandboxError)
    assert.strictEqual((bad as SandboxError)._tag, "InvalidOptionsError")
    assert.strictEqual((bad as SandboxError).cause._tag, "InvalidOptionsError")
    assert.strictEqual(
      (bad as Error).message,
      "Invalid CliRuntime options: noChangeTimeoutSeconds: Expected a value greater than 0"
    )
    const cpus = await rejection(Sandbox.create("docker", { cpus: 0.001 }))
    assert.strictEqual((cpus as SandboxError)._tag, "InvalidOptionsError")
    assert.strictEqual(
      (cpus as Error).message,
      "Invalid DockerRuntime options: cpus: Expected at least 0.01 (Docker's smallest share; 0 would be no limit)"
    )
    const unknown = await rejection(Sandbox.create("vm" as "cli"))
    assert.strictEqual(
      (unknown as Error).message,
      "Unknown runtime \"vm\": one of cli, local, docker, kubernetes, e2b, daytona, modal, runloop, remote."
    )
  })

  it("aborting a command's signal kills it and rejects with the signal's reason; bad run options are refused", async () => {
    await using sandbox = await Sandbox.create("cli")
    const refused = await rejection(sandbox.commands.run("echo never", { timeout: 0, maxOutputLength: 1.5 }))
    assert.strictEqual((refused as SandboxError)._tag, "InvalidOptionsError")
    assert.strictEqual(
      (refused as Error).message,
      "Invalid commands.run options: timeout: Expected a value greater than 0; maxOutputLength: Expected an integer"
    )
    const controller = new AbortController()
    const running = sandbox.commands.run("echo started; sleep 300", {
      signal: controller.signal,
      onStdout: () => controller.abort()
    })
    const error = await rejection(running)
    assert.strictEqual((error as Error).name, "AbortError")
  })
})
