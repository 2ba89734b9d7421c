/**
 * The server's command line as every provisioner builds it (server/commandLine.ts) is what the
 * server parses (server/argv.ts): each field survives the round trip, and the environment's
 * precedence keeps the provisioner's own variables and the session id above the user's.
 */
import { assert, describe, it } from "@effect/vitest"
import { sandboxEnv, SERVER_TUNING } from "../../src/executor/childEnv.ts"
import { SandboxConfig } from "../../src/schema/SandboxConfig.ts"
import { parseServerArgs } from "../../src/server/argv.ts"
import {
  pluginsIn,
  PYTHON_VARIABLE,
  sandboxServerEnv,
  serverCommand,
  serverEnv,
  serverToolArgs
} from "../../src/server/commandLine.ts"

describe("server command line", () => {
  it("every field a provisioner sets is what the server parses", () => {
    const argv = serverCommand({
      node: "/opt/node",
      entry: "/opt/server.mjs",
      port: 3000,
      workingDir: "/workspace",
      host: "0.0.0.0",
      username: "openhands",
      userId: 1000,
      tools: { ipython: true, browser: true, vscode: true },
      restrictToWorkspace: true,
      exitOnStdinClose: true,
      temporaryDirs: ["/tmp/a", "/tmp/b"],
      ownerLease: "/lease/owner"
    })
    assert.deepStrictEqual(argv.slice(0, 2), ["/opt/node", "/opt/server.mjs"])
    const parsed = parseServerArgs(argv.slice(2))
    assert.strictEqual(parsed._tag, "Ok")
    assert.deepStrictEqual(parsed._tag === "Ok" ? parsed.args : null, {
      port: 3000,
      host: "0.0.0.0",
      workingDir: "/workspace",
      plugins: ["jupyter", "agent_skills", "vscode"],
      username: "openhands",
      userId: 1000,
      enableBrowser: true,
      browsergymEvalEnv: null,
      exitOnStdinClose: true,
      ownerLease: "/lease/owner",
      temporaryDirs: ["/tmp/a", "/tmp/b"],
      restrictToWorkspace: true
    })
  })

  it("without tools or extras: no plugins, no browser, none of the optional flags", () => {
    const argv = serverCommand({
      node: "node",
      entry: "main.ts",
      port: 0,
      workingDir: "/w",
      host: "127.0.0.1",
      username: "me",
      userId: 501,
      tools: {},
      restrictToWorkspace: false
    })
    assert.deepStrictEqual(argv.slice(2), [
      "0",
      "--working-dir",
      "/w",
      "--host",
      "127.0.0.1",
      "--username",
      "me",
      "--user-id",
      "501",
      "--no-enable-browser"
    ])
    assert.deepStrictEqual(serverToolArgs({ ipython: { agentSkills: false } }), [
      "--plugins",
      "jupyter",
      "--no-enable-browser"
    ])
  })

  it("the environment: the user's, then the tools', the provisioner's, the session id and timeout last", () => {
    const env = serverEnv({
      env: { A: "user", RUNTIME_ID: "forged", NO_CHANGE_TIMEOUT_SECONDS: "1", [PYTHON_VARIABLE]: "/usr/bin/python3" },
      tools: { ipython: { python: "/opt/py" } },
      sessionId: "s-1",
      noChangeTimeoutSeconds: 10,
      extra: { A: "provisioner", KEY_FILE: "/tmp/k" }
    })
    assert.deepStrictEqual(env, {
      A: "provisioner",
      RUNTIME_ID: "s-1",
      NO_CHANGE_TIMEOUT_SECONDS: "10",
      [PYTHON_VARIABLE]: "/opt/py",
      KEY_FILE: "/tmp/k"
    })
  })

  it("the server's memory tuning: in a sandbox server's environment, not its children's, unless the sandbox set it", () => {
    const server = sandboxServerEnv(new SandboxConfig({}), {}, "s-1", {})
    assert.strictEqual(server["GLIBC_TUNABLES"], SERVER_TUNING["GLIBC_TUNABLES"])
    assert.strictEqual(server["NODE_OPTIONS"], "--max-semi-space-size=1")
    assert.notProperty(sandboxEnv(server), "GLIBC_TUNABLES")
    assert.notProperty(sandboxEnv(server), "NODE_OPTIONS")
    const own = sandboxServerEnv(
      new SandboxConfig({}),
      { env: { NODE_OPTIONS: "--max-old-space-size=4096" } },
      "s-1",
      {}
    )
    assert.strictEqual(own["NODE_OPTIONS"], "--max-old-space-size=4096")
    assert.strictEqual(sandboxEnv(own)["NODE_OPTIONS"], "--max-old-space-size=4096")
    assert.notProperty(sandboxEnv(own), "GLIBC_TUNABLES")
  })

  it("pluginsIn reads back the plugins a command asks for, as argparse's nargs=\"+\" takes them", () => {
    assert.deepStrictEqual(pluginsIn(serverToolArgs({ ipython: true, vscode: true })), [
      "jupyter",
      "agent_skills",
      "vscode"
    ])
    assert.deepStrictEqual(pluginsIn(["python", "-m", "server", "60000", "--plugins", "a", "b", "--username", "u"]), [
      "a",
      "b"
    ])
    assert.deepStrictEqual(pluginsIn(["server", "--plugins=vscode", "--enable-browser", "--plugins", "jupyter"]), [
      "vscode",
      "jupyter"
    ])
    assert.deepStrictEqual(pluginsIn(["server", "--no-enable-browser"]), [])
  })
})
