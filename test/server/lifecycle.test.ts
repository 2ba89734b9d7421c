/** The server's command line, and its end: nothing it or its shells started outlives it, even when killed. */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber } from "effect"
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { parseServerArgs, type ServerArgs } from "../../src/server/argv.ts"
import { eventually } from "../eventually.ts"
import { isRunning, markedProcesses, postJson, run, runAction, startedPids, startTestServer } from "./helpers.ts"

const MAIN = fileURLToPath(new URL("../../src/server/main.ts", import.meta.url))
const SERVER = "server/main" // in the command line of every server these tests start

/** The parsed args, failing the test with the parser's message if it refused them. */
const ok = (argv: ReadonlyArray<string>): ServerArgs => {
  const parsed = parseServerArgs(argv)
  if (parsed._tag === "Error") return assert.fail(`${JSON.stringify(argv)} refused: ${parsed.message}`)
  return parsed.args
}
/** The parser's error message (failing the test if it accepted `argv`). */
const refused = (argv: ReadonlyArray<string>): string => {
  const parsed = parseServerArgs(argv)
  if (parsed._tag === "Ok") return assert.fail(`${JSON.stringify(argv)} accepted: ${JSON.stringify(parsed.args)}`)
  assert.include(parsed.message, "usage: effect-sandbox-server <port>")
  return parsed.message
}

const unique = () => `${900 + Math.floor(Math.random() * 99)}.${Math.floor(Math.random() * 1e6)}`

const serversLeft = () => [...startedPids].filter((pid) => isRunning(pid, SERVER))

afterEach(async () => {
  const deadline = Date.now() + 5_000
  while (serversLeft().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
  const remaining = serversLeft()
  startedPids.clear()
  assert.deepStrictEqual(remaining, [], "server processes left running after the test")
})

describe("server argv (parseServerArgs)", () => {
  it("requires the port", () => {
    assert.include(refused([]), "the port is required")
    assert.include(refused(["--working-dir", "/w", "--no-enable-browser"]), "the port is required")
  })

  it("refuses invalid ports", () => {
    for (const port of ["abc", "65536", "70000", "1.5", "80abc", "-1"]) refused([port])
    assert.include(refused(["abc"]), "invalid port: abc")
    assert.strictEqual(ok(["0"]).port, 0)
    assert.strictEqual(ok(["65535"]).port, 65535)
  })

  it("refuses ports that are not plain decimal integers (as argparse's int)", () => {
    for (const port of ["", " ", "0x1f", "1e3"]) refused([port])
  })

  it("has OpenHands' defaults, but listens on 127.0.0.1 (safe by default)", () => {
    assert.deepStrictEqual(ok(["8000"]), {
      port: 8000,
      host: "127.0.0.1",
      workingDir: null,
      plugins: [],
      username: "openhands",
      userId: 1000,
      enableBrowser: true,
      browsergymEvalEnv: null,
      exitOnStdinClose: false,
      ownerLease: null,
      temporaryDirs: [],
      // OpenHands' server does not confine file actions (its sandbox is the boundary); our layers ask.
      restrictToWorkspace: false
    })
  })

  it("--restrict-to-workspace turns the workspace restriction on", () => {
    assert.isTrue(ok(["8000", "--restrict-to-workspace", "--working-dir", "/w"]).restrictToWorkspace)
    assert.include(
      refused(["8000", "--restrict-to-workspace=yes"]),
      "unrecognized argument: --restrict-to-workspace=yes"
    )
  })

  it("refuses an unknown plugin with `Plugin X not found`", () => {
    assert.include(refused(["8000", "--plugins", "jupyter", "nope"]), "Plugin nope not found")
    assert.include(refused(["8000", "--plugins"]), "--plugins")
  })

  it("takes several plugins after one --plugins, then further options", () => {
    const args = ok(["8000", "--plugins", "jupyter", "agent_skills", "--username", "me"])
    assert.deepStrictEqual(args.plugins, ["jupyter", "agent_skills"])
    assert.strictEqual(args.username, "me")
  })

  it("parses OpenHands' own startup command", () => {
    const args = ok([
      "30000",
      "--working-dir",
      "/workspace",
      "--plugins",
      "agent_skills",
      "jupyter",
      "vscode",
      "--username",
      "openhands",
      "--user-id",
      "1000",
      "--no-enable-browser"
    ])
    assert.strictEqual(args.port, 30000)
    assert.strictEqual(args.workingDir, "/workspace")
    assert.deepStrictEqual(args.plugins, ["agent_skills", "jupyter", "vscode"])
    assert.strictEqual(args.userId, 1000)
    assert.isFalse(args.enableBrowser)
  })

  it("--no-enable-browser / --enable-browser: the last one wins", () => {
    assert.isFalse(ok(["8000", "--no-enable-browser"]).enableBrowser)
    assert.isTrue(ok(["8000", "--no-enable-browser", "--enable-browser"]).enableBrowser)
  })

  it("--browsergym-eval-env needs the browser", () => {
    assert.include(
      refused(["8000", "--no-enable-browser", "--browsergym-eval-env", "browsergym/miniwob.click-test"]),
      "BrowserUnavailableException"
    )
    assert.include(
      refused(["8000", "--browsergym-eval-env", "browsergym/miniwob.click-test", "--no-enable-browser"]),
      "BrowserUnavailableException"
    )
    const args = ok(["8000", "--browsergym-eval-env", "browsergym/webarena", "extra", "--host", "127.0.0.1"])
    assert.strictEqual(args.browsergymEvalEnv, "browsergym/webarena extra")
    assert.strictEqual(args.host, "127.0.0.1")
  })

  it("refuses options missing their value and unknown options", () => {
    assert.include(refused(["8000", "--working-dir"]), "--working-dir")
    assert.include(refused(["8000", "--username", "--no-enable-browser"]), "--username")
    assert.include(refused(["8000", "--bogus"]), "--bogus")
    assert.include(refused(["8000", "9000"]), "9000")
    assert.include(refused(["8000", "--user-id", "x"]), "--user-id")
    assert.include(refused(["8000", "--user-id"]), "--user-id") // not uid 0
    assert.include(refused(["8000", "--user-id", "--no-enable-browser"]), "--user-id")
  })
})

describe("the server binary", () => {
  it("exits with code 2 and the usage for bad argv", () => {
    for (const argv of [[], ["not-a-port"], ["0", "--plugins", "nope"], ["0", "--frobnicate"]]) {
      const result = spawnSync(process.execPath, [MAIN, ...argv], { encoding: "utf8", timeout: 20_000 })
      if (result.pid !== undefined) startedPids.add(result.pid)
      assert.strictEqual(result.status, 2, `${JSON.stringify(argv)}: ${result.stderr}`)
      assert.include(result.stderr, "usage: effect-sandbox-server <port>")
      assert.notInclude(result.stdout, "listening")
    }
  }, 60_000)

  it.live("stopping it kills the shells' background jobs, even setsid'd ones", () =>
    Effect.gen(function*() {
      const seconds = unique()
      const runtimeId = yield* Effect.scoped(Effect.gen(function*() {
        const server = yield* startTestServer()
        yield* run(
          server,
          `setsid sleep ${seconds} >/dev/null 2>&1 < /dev/null & nohup sleep ${seconds} >/dev/null 2>&1 &`
        )
        yield* eventually(
          () => `expected two marked sleeps: ${JSON.stringify(markedProcesses(server.sessionId))}`,
          () => markedProcesses(server.sessionId).filter((p) => p.cmdline === `sleep ${seconds}`).length === 2
        )
        return server.sessionId
      }))
      yield* eventually(() => `left behind: ${JSON.stringify(markedProcesses(runtimeId))}`, () =>
        markedProcesses(runtimeId).length === 0)
    }))

  it.live("SIGKILLed mid-action: the request fails, and closing its scope leaves no marked process", () =>
    Effect.gen(function*() {
      const inFlightSeconds = `30.${Math.floor(Math.random() * 1e6)}`
      const background = unique()
      const stateDirs: Array<string> = []
      const runtimeId = yield* Effect.scoped(Effect.gen(function*() {
        const server = yield* startTestServer()
        yield* run(server, `setsid sleep ${background} >/dev/null 2>&1 < /dev/null &`)
        const inFlight = yield* Effect.forkChild(
          postJson(server, "/execute_action", runAction(`sleep ${inFlightSeconds}`))
        )
        yield* eventually(
          () => `the in-flight sleep never started: ${JSON.stringify(markedProcesses(server.sessionId))}`,
          () => markedProcesses(server.sessionId).some((p) => p.cmdline === `sleep ${inFlightSeconds}`)
        )
        // The server's private state dir (the shell's --rcfile) belongs to its starter, not to the server.
        stateDirs.push(
          ...markedProcesses(server.sessionId).flatMap((p) => {
            const dir = /--rcfile (\S+)\/bashrc/.exec(p.cmdline)?.[1]
            return dir === undefined ? [] : [dir]
          })
        )
        process.kill(server.pid, "SIGKILL")
        const exit = yield* Fiber.await(inFlight).pipe(Effect.timeout("5 seconds"))
        assert.isTrue(Exit.isFailure(exit), `the in-flight request should fail, got ${JSON.stringify(exit)}`)
        yield* eventually(() => `server ${server.pid} survived SIGKILL`, () => !isRunning(server.pid, SERVER))
        // The setsid'd job outlived its server: only the cleanup on scope close can reap it.
        assert.isTrue(markedProcesses(server.sessionId).some((p) => p.cmdline === `sleep ${background}`))
        return server.sessionId
      }))
      yield* eventually(
        () => `left behind: ${JSON.stringify(markedProcesses(runtimeId))}`,
        () => markedProcesses(runtimeId).length === 0
      )
      // A SIGKILLed server cannot remove its state dir; closing the starter's scope did.
      assert.isNotEmpty(stateDirs)
      for (const dir of stateDirs) assert.isFalse(existsSync(dir), `state dir ${dir} was left behind`)
    }))
})
