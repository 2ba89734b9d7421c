/**
 * The `vscode` plugin on LocalRuntime: code-server on this machine (the tools image's, copied out:
 * test/vscode/hostCodeServer.ts) on a free port of 127.0.0.1, its URL in `info.urls.vscode`, the
 * workbench loading the host workspace in a real Chromium (a screenshot in
 * `.tmp/test-output/local-vscode-workbench.png`), everything gone on release. Without code-server
 * the layer refuses to start, naming what is missing; one that cannot start leaves the runtime
 * without the URL and a warning in the log; without `vscode` the server gets no port.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { InvalidOptionsError } from "../../src/index.ts"
import { LocalRuntime, type LocalRuntimeOptions } from "../../src/local.ts"
import { codeServerEntry } from "../../src/server/vscode/codeServer.ts"
import { chromiumAvailable } from "../conformance/chromium.ts"
import { buildLogged, buildRuntime } from "../docker/helpers.ts"
import { describeDocker } from "../docker/infra.ts"
import { hostCodeServer } from "../vscode/hostCodeServer.ts"
import { expectOwnIdeHost, expectWorkbench, WORKBENCH_FILE, WORKBENCH_TEXT } from "../vscode/workbench.ts"

/** A temporary directory for the test, removed with its scope. */
const scopedTempDir = (prefix: string) =>
  Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), prefix))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

/** A LocalRuntime in its own scope, which the test can release at a chosen moment. */
const buildLocal = (options: LocalRuntimeOptions) => buildRuntime(LocalRuntime.layer(options))

/** The pids of processes whose command line contains `text`. */
const pidsWith = (text: string) =>
  spawnSync("pgrep", ["-f", "--", text], { encoding: "utf8" }).stdout.split("\n").filter((pid) => pid !== "")

/** The environment of the action server serving `workspace` (its only process with that working dir). */
const serverEnviron = (workspace: string) => {
  const pids = pidsWith(`--working-dir ${workspace}`)
  assert.lengthOf(pids, 1, "one server for the workspace")
  return Object.fromEntries(
    readFileSync(`/proc/${pids[0]}/environ`, "latin1").split("\0").filter((e) => e !== "").map((entry) => {
      const at = entry.indexOf("=")
      return [entry.slice(0, at), entry.slice(at + 1)]
    })
  )
}

/** The private directory code-server runs in (its socket's, from its command line). */
const ideDirectory = (codeServer: string) => {
  const commandLines = spawnSync("pgrep", ["-af", "--", codeServerEntry(codeServer)], { encoding: "utf8" }).stdout
  const socket = /--socket (\S+)\/code-server\.sock/.exec(commandLines)
  assert.isNotNull(socket, `code-server's command line: ${commandLines}`)
  return socket![1]!
}

/** The local addresses listening on TCP `port` (`ss`: `127.0.0.1:<port>` for a loopback-only listener). */
const listeners = (port: string) =>
  spawnSync("ss", ["-Hltn", `sport = :${port}`], { encoding: "utf8" }).stdout.split("\n").filter((l) => l !== "")
    .map((line) => line.trim().split(/\s+/)[3])

/** How the layer fails with these options and configuration (the environment's variables). */
const startFailure = (options: LocalRuntimeOptions, env: Record<string, string> = {}) =>
  buildLocal(options).pipe(
    Effect.flip,
    Effect.scoped,
    Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env)))
  )

const howToGet = "Install it with `npm install code-server@4` (run by this Node) in a directory D and name " +
  "D/node_modules/code-server in codeServer or EFFECT_SANDBOX_CODE_SERVER, or use DockerRuntime on the tools " +
  "image, which has it at /opt/code-server."

describe("LocalRuntime vscode", () => {
  it.live("without code-server, vscode fails the layer with what is missing and how to get it; nothing starts", () =>
    Effect.gen(function*() {
      const dir = yield* scopedTempDir("local-vscode-none-")
      const workspace = join(dir, "workspace")
      const missing = join(dir, "node_modules", "code-server")
      const error = yield* startFailure({ vscode: true, codeServer: missing, workspace })
      assert.instanceOf(error, InvalidOptionsError)
      assert.strictEqual(
        error.message,
        `Invalid LocalRuntime options: codeServer: vscode needs code-server on this machine, and ${missing} ` +
          `(the codeServer option) has none (no out/node/entry.js). ${howToGet}`
      )
      // Refused before the provisioner made anything: no workspace, no server.
      assert.isFalse(existsSync(workspace))
      assert.deepStrictEqual(pidsWith(`--working-dir ${workspace}`), [])

      // Without the option, EFFECT_SANDBOX_CODE_SERVER names it (a relative path, resolved here).
      const fromEnv = yield* startFailure({ vscode: true, workspace }, { EFFECT_SANDBOX_CODE_SERVER: "cs/none" })
      assert.instanceOf(fromEnv, InvalidOptionsError)
      assert.strictEqual(
        fromEnv.message,
        `Invalid LocalRuntime options: codeServer: vscode needs code-server on this machine, and ` +
          `${join(process.cwd(), "cs", "none")} (EFFECT_SANDBOX_CODE_SERVER) has none (no out/node/entry.js). ` +
          howToGet
      )
      assert.isFalse(existsSync(workspace))
    }).pipe(Effect.scoped))

  it.live("a code-server that cannot start: the runtime starts without urls.vscode and logs why there is none", () =>
    Effect.gen(function*() {
      // An install whose entry script fails at once (what a broken build or a wrong Node gives).
      const broken = join(yield* scopedTempDir("local-vscode-broken-"), "code-server")
      mkdirSync(join(broken, "out", "node"), { recursive: true })
      writeFileSync(codeServerEntry(broken), "process.exit(3)\n")
      const { lines, rt } = yield* buildLogged(LocalRuntime.layer({ vscode: true, codeServer: broken }))
      assert.strictEqual(serverEnviron(rt.info.workspace)["EFFECT_SANDBOX_CODE_SERVER"], broken)
      assert.deepStrictEqual(Object.keys(rt.info.urls), ["actionServer"])
      assert.include(
        lines,
        "VS Code was asked for (vscode: true) but the server's plugin is off (its connection token is null): " +
          "no info.urls.vscode; the server's log says why"
      )
    }).pipe(Effect.scoped))

  it.live("without vscode the server gets no VSCODE_PORT and the runtime no urls.vscode", () =>
    Effect.gen(function*() {
      const { rt } = yield* buildLocal({})
      const env = serverEnviron(rt.info.workspace)
      assert.isUndefined(env["VSCODE_PORT"])
      assert.deepStrictEqual(Object.keys(rt.info.urls), ["actionServer"])
    }).pipe(Effect.scoped))
})

describeDocker("LocalRuntime vscode with the tools image's code-server", () => {
  it.live.skipIf(!chromiumAvailable())(
    "the workbench at info.urls.vscode (127.0.0.1 only) loads the host workspace and shows a file; all gone on release",
    () =>
      Effect.gen(function*() {
        const codeServer = yield* hostCodeServer
        const workspace = yield* scopedTempDir("local-vscode-")
        writeFileSync(join(workspace, WORKBENCH_FILE), WORKBENCH_TEXT)
        const { release, rt } = yield* buildLocal({ workspace, vscode: true, codeServer })
        const vscodeUrl = rt.info.urls["vscode"]
        const url = expectOwnIdeHost(vscodeUrl)
        // The port the server was given is the URL's, and the IDE's proxy listens on loopback only.
        const env = serverEnviron(rt.info.workspace)
        assert.strictEqual(env["VSCODE_PORT"], url.port)
        assert.strictEqual(env["EFFECT_SANDBOX_CODE_SERVER"], codeServer)
        assert.deepStrictEqual(listeners(url.port), [`127.0.0.1:${url.port}`])
        assert.isTrue(existsSync(join(rt.info.workspace, ".vscode", "settings.json")))
        const ide = ideDirectory(codeServer)
        assert.isTrue(existsSync(join(ide, "code-server.sock")))
        yield* expectWorkbench(vscodeUrl, { screenshot: "local-vscode-workbench", workspace: rt.info.workspace })
        yield* release
        assert.deepStrictEqual(pidsWith(`--working-dir ${rt.info.workspace}`), [])
        assert.deepStrictEqual(pidsWith(codeServerEntry(codeServer)), [])
        assert.deepStrictEqual(listeners(url.port), [])
        assert.isFalse(existsSync(ide))
      }).pipe(Effect.scoped),
    300_000
  )
})
