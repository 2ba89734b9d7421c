/**
 * The shell and the IPython kernel see what a login sets for the sandbox's user
 * (`USER`, `LOGNAME`, `HOME`, `SHELL`), even when the server's own environment lacks
 * them (issue 15: `os.environ['USER']` was missing in the kernel).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { userInfo } from "node:os"
import { sandboxEnv } from "../../src/executor/childEnv.ts"
import { CliRuntime, CmdRunAction, IPythonRunCellAction, Runtime } from "../../src/index.ts"
import { kernelAvailable } from "../conformance/kernel.ts"

const user = userInfo()
const login = { USER: user.username, LOGNAME: user.username, HOME: user.homedir, SHELL: user.shell || "/bin/sh" }

describe("sandboxEnv: a login's variables", () => {
  it("sets USER, LOGNAME, HOME and SHELL from the user this process runs as when the environment lacks them", () => {
    const env = sandboxEnv({ PATH: "/usr/bin:/bin", SESSION_API_KEY: "k".repeat(20) })
    assert.deepStrictEqual(env, { PATH: "/usr/bin:/bin", ...login })
  })

  it("names the real user even when USER says otherwise, and keeps a HOME or SHELL set on purpose", () => {
    const env = sandboxEnv({ USER: "someone-else", LOGNAME: "x", HOME: "/srv/home", SHELL: "/bin/zsh" })
    assert.deepStrictEqual(env, { USER: user.username, LOGNAME: user.username, HOME: "/srv/home", SHELL: "/bin/zsh" })
  })
})

/** Runs `body` with this process's environment lacking the login variables, restored afterwards. */
const withoutLoginVariables = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const saved = { USER: process.env["USER"], LOGNAME: process.env["LOGNAME"], SHELL: process.env["SHELL"] }
      delete process.env["USER"]
      delete process.env["LOGNAME"]
      delete process.env["SHELL"]
      return saved
    }),
    () => body,
    (saved) =>
      Effect.sync(() => {
        for (const [name, value] of Object.entries(saved)) {
          if (value === undefined) delete process.env[name]
          else process.env[name] = value
        }
      })
  )

describe("the sandbox's processes run with the login's variables", () => {
  const ipython = kernelAvailable()

  it.live("in the shell, from a server environment without USER, LOGNAME or SHELL", () =>
    withoutLoginVariables(
      Effect.gen(function*() {
        const rt = yield* Runtime
        const obs = yield* rt.runCommand(new CmdRunAction({ command: "echo \"$USER|$LOGNAME|$HOME|$SHELL\"" }))
        assert.strictEqual(obs.content, `${login.USER}|${login.LOGNAME}|${login.HOME}|${login.SHELL}`)
      }).pipe(Effect.provide(Layer.fresh(CliRuntime.layer({}))))
    ))

  it.live.skipIf(!ipython)("in the IPython kernel: os.environ['USER'] and friends", () =>
    withoutLoginVariables(
      Effect.gen(function*() {
        const rt = yield* Runtime
        const obs = yield* rt.runIPython(
          new IPythonRunCellAction({
            code: "import os; print('|'.join(os.environ[n] for n in ('USER', 'LOGNAME', 'HOME', 'SHELL')))",
            includeExtra: false
          })
        )
        assert.strictEqual(obs.content, `${login.USER}|${login.LOGNAME}|${login.HOME}|${login.SHELL}`)
      }).pipe(Effect.provide(Layer.fresh(CliRuntime.layer({ ipython: true }))))
    ))
})
