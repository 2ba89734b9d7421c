/**
 * Safe by default: both server commands listen on 127.0.0.1 unless told otherwise, refuse a
 * host beyond loopback without a session key, and a key given as OpenHands does
 * (`SESSION_API_KEY`) still works and is still hidden from the sandbox's commands.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import { LISTENING_PREFIX } from "../../src/server/announce.ts"
import { parseServerArgs } from "../../src/server/argv.ts"
import { isLoopback } from "../../src/server/exposure.ts"
import { runAction, tempDir } from "./helpers.ts"

const ROOT = join(import.meta.dirname, "..", "..")
const SERVER = [join(ROOT, "src/server/main.ts")]
const CLI_SERVE = [join(ROOT, "src/cli/main.ts"), "serve"]

/** The environment of this test process without any session key. */
const keyless = () => {
  const { SESSION_API_KEY: _, ...env } = process.env
  return env
}

type Outcome =
  | { readonly _tag: "Listening"; readonly host: string; readonly port: number; readonly child: ChildProcess }
  | { readonly _tag: "Exited"; readonly code: number | null; readonly stderr: string }

/** Start a server command; it either announces where it listens or exits. Killed when the scope closes. */
const start = (command: ReadonlyArray<string>, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<Outcome>((resolve) => {
        const child = spawn(process.execPath, [...command, ...args], { env, stdio: ["ignore", "pipe", "pipe"] })
        let stdout = ""
        let stderr = ""
        child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
        child.stdout.setEncoding("utf8").on("data", (d: string) => {
          stdout += d
          const line = stdout.split("\n").find((l) => l.startsWith(LISTENING_PREFIX))
          if (line !== undefined) {
            resolve({ _tag: "Listening", ...JSON.parse(line.slice(LISTENING_PREFIX.length)), child })
          }
        })
        child.on("exit", (code) => resolve({ _tag: "Exited", code, stderr }))
      })
    ),
    (outcome) => Effect.sync(() => outcome._tag === "Listening" && outcome.child.kill("SIGKILL"))
  )

const REFUSAL = "without a session key: anyone who can reach it could run commands. Set SESSION_API_KEY"

describe("safe defaults", () => {
  it("the server's --host defaults to 127.0.0.1", () => {
    const parsed = parseServerArgs(["0"])
    assert.strictEqual(parsed._tag === "Ok" ? parsed.args.host : parsed.message, "127.0.0.1")
  })

  it("loopback is localhost, 127.0.0.0/8 and ::1; nothing else", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]", "::ffff:127.0.0.1"]) {
      assert.isTrue(isLoopback(host), host)
    }
    for (const host of ["0.0.0.0", "::", "192.168.1.5", "10.0.0.1", "example.com", "127.0.0.1.example.com", ""]) {
      assert.isFalse(isLoopback(host), host)
    }
  })

  for (const [name, command] of [["effect-sandbox-server", SERVER], ["effect-sandbox serve", CLI_SERVE]] as const) {
    it.live(`${name} without --host listens on 127.0.0.1, with no key needed`, () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("exposure-")
        const outcome = yield* start(command, ["0", "--working-dir", dir], keyless())
        assert.strictEqual(outcome._tag, "Listening", outcome._tag === "Exited" ? outcome.stderr : "")
        assert.strictEqual(outcome._tag === "Listening" && outcome.host, "127.0.0.1")
      }).pipe(Effect.scoped), 60_000)

    it.live(
      `${name} refuses 0.0.0.0 without a key (or with an empty one), exiting non-zero`,
      () =>
        Effect.gen(function*() {
          const dir = yield* tempDir("exposure-")
          for (const env of [keyless(), { ...keyless(), SESSION_API_KEY: "" }]) {
            const outcome = yield* start(command, ["0", "--working-dir", dir, "--host", "0.0.0.0"], env)
            assert.strictEqual(outcome._tag, "Exited", "it must not listen")
            if (outcome._tag !== "Exited") continue
            assert.strictEqual(outcome.code, 2)
            assert.include(outcome.stderr, `Refusing to listen on 0.0.0.0 ${REFUSAL}`)
          }
        }).pipe(Effect.scoped),
      60_000
    )
  }

  it.live(
    "with SESSION_API_KEY (OpenHands' way) 0.0.0.0 is allowed, the key is required and no command sees it",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("exposure-")
        const key = "env-given-key-0123456789"
        const outcome = yield* start(SERVER, ["0", "--working-dir", dir, "--host", "0.0.0.0"], {
          ...keyless(),
          SESSION_API_KEY: key
        })
        if (outcome._tag === "Exited") return assert.fail(outcome.stderr)
        assert.strictEqual(outcome.host, "0.0.0.0")
        const url = `http://127.0.0.1:${outcome.port}/execute_action`
        const body = JSON.stringify(runAction("env | grep -c -e SESSION_API_KEY -e env-given-key; true"))
        const headers = { "content-type": "application/json" }
        const denied = yield* Effect.promise(() => fetch(url, { method: "POST", headers, body }))
        assert.strictEqual(denied.status, 403)
        const reply = yield* Effect.promise(() =>
          fetch(url, { method: "POST", headers: { ...headers, "X-Session-API-Key": key }, body }).then((r) => r.json())
        )
        assert.strictEqual(reply.content, "0")
      }).pipe(Effect.scoped),
    60_000
  )
})
