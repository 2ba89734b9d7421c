/**
 * E2BRuntime through the real `e2b` SDK against the stand-in: start failures with their messages
 * (bad key, missing template, a template without the payload or Node), what the SDK
 * sent on create (timeout, metadata), the timeout renewed while the owner lives, pause/resume
 * keeping memory, attach by session id, the reaper, and nothing left behind.
 */
import { assert, it } from "@effect/vitest"
import { Sandbox } from "e2b"
import { Effect, Redacted } from "effect"
import { spawnSync } from "node:child_process"
import { hostname } from "node:os"
import { E2BRuntime } from "../../../src/e2b.ts"
import { CmdRunAction, RuntimeStartError, SandboxConfig } from "../../../src/index.ts"
import { expectDisconnected } from "../../disconnected.ts"
import { buildRuntime, startError } from "../../docker/helpers.ts"
import { describeDocker } from "../../docker/infra.ts"
import { keyCheck } from "../keyCheck.ts"
import { docker } from "./docker.ts"
import { API_KEY, inSandbox, standinOptions, suiteStandin } from "./fixture.ts"
import type { Standin } from "./server.ts"

/** The create calls a stand-in received. */
const creates = (s: Standin) => s.calls.filter((c) => c.method === "POST" && c.path === "/v2/sandboxes")

describeDocker("E2BRuntime (stand-in)", () => {
  const standinOf = suiteStandin()

  /** The start's RuntimeStartError message, once the stand-in holds no sandbox. */
  const refusal = (layer: Parameters<typeof startError>[0]) =>
    Effect.gen(function*() {
      const error = yield* startError(layer)
      assert.instanceOf(error, RuntimeStartError)
      assert.deepStrictEqual(yield* Effect.promise(() => standinOf().containers()), [])
      return (error as RuntimeStartError).message
    })

  it.live("a bad API key is E2B's 401 text", () =>
    Effect.gen(function*() {
      const message = yield* refusal(
        E2BRuntime.layer(standinOptions(standinOf(), { apiKey: Redacted.make("e2b_wrong") }))
      )
      assert.strictEqual(
        message,
        "E2B could not create a sandbox from template effect-sandbox-runtime: Unauthorized, please check your " +
          "credentials. - Invalid API key, please visit https://e2b.dev/docs/api-key for more information."
      )
    }))

  it.live("a missing template is E2B's 404 text", () =>
    Effect.gen(function*() {
      const message = yield* refusal(E2BRuntime.layer(standinOptions(standinOf(), { template: "no-such-template" })))
      assert.strictEqual(
        message,
        "E2B could not create a sandbox from template no-such-template: 404: template 'no-such-template' not found"
      )
    }))

  it.live("a template with neither the payload nor Node says what it lacks, and the sandbox is killed", () =>
    Effect.gen(function*() {
      const message = yield* refusal(E2BRuntime.layer(standinOptions(standinOf(), { template: "base", user: "root" })))
      assert.strictEqual(
        message,
        "The E2B template base has no action-server payload (/opt/effect-sandbox/payload/server.mjs) and no Node.js " +
          "on its PATH to run an uploaded one: make the template from the runtime image (docs/runtimes/e2b.md, " +
          "\"Making the template\"), or use a template with Node 22.19 or newer."
      )
      const message2 = yield* refusal(
        E2BRuntime.layer(standinOptions(standinOf(), { template: "base", user: "root", uploadPayload: false }))
      )
      assert.match(message2, /has no action-server payload .* and uploadPayload is off: make the template/)
    }))

  it.live("a template with Node but no payload gets the payload uploaded and runs it", () =>
    Effect.gen(function*() {
      yield* inSandbox(standinOf(), { template: "node-only" }, (rt) =>
        Effect.gen(function*() {
          const obs = yield* rt.runCommand("ls ~/.effect-sandbox/payload/server.mjs; whoami; pwd")
          assert.strictEqual(obs.content.trim(), "/home/user/.effect-sandbox/payload/server.mjs\nuser\n/workspace")
        }))
    }), 120_000)

  it.live(
    "the server has the session key's digest, and no process environment or file of the sandbox the key",
    () =>
      Effect.gen(function*() {
        yield* inSandbox(standinOf(), {}, (rt) =>
          Effect.gen(function*() {
            const sandbox = [...standinOf().sandboxes.values()].at(-1)!
            const key = sandbox.metadata["effect-sandbox.session-key"]!
            assert.isAtLeast(key.length, 32)
            const obs = yield* rt.runCommand(keyCheck(key))
            assert.strictEqual(obs.content, "digest=yes\nkey=0")
          }))
      }),
    120_000
  )

  it.live(
    "info.urls reaches an app port through E2B's port exposure (getHost); without vscode, nothing on 8001",
    () =>
      inSandbox(standinOf(), { appPorts: [9000] }, (rt) =>
        Effect.gen(function*() {
          const sandbox = [...standinOf().sandboxes.values()].at(-1)!
          const url = rt.info.urls["app-9000"]!
          assert.strictEqual(url, standinOf().hostUrl(`9000-${sandbox.sandboxID}.e2b.app`))
          assert.isUndefined(rt.info.urls["vscode"])
          const ide = yield* Effect.promise(() => fetch(standinOf().hostUrl(`8001-${sandbox.sandboxID}.e2b.app`)))
          assert.strictEqual(ide.status, 502)
          yield* rt.runCommand(
            `nohup /opt/effect-sandbox/bin/node -e "require('http').createServer((q, s) => s.end('app-ok ' + q.url))` +
              `.listen(9000, '0.0.0.0')" > /dev/null 2>&1 &`
          )
          const body = yield* Effect.promise(async () => {
            for (let attempt = 0; attempt < 100; attempt++) {
              const answer = await fetch(`${url}/hello`).catch(() => undefined)
              if (answer?.status === 200) return answer.text()
              await new Promise((resolve) => setTimeout(resolve, 100))
            }
            return "no answer"
          })
          assert.strictEqual(body, "app-ok /hello")
        })),
    120_000
  )

  it.live(
    "a sandbox killed elsewhere shows as a disconnect naming E2B, and nothing more is sent",
    () =>
      inSandbox(standinOf(), {}, (rt) =>
        Effect.gen(function*() {
          const sandbox = [...standinOf().sandboxes.values()].at(-1)!
          // Through the SDK as another client would (its URL options are internal in its types).
          const elsewhere = { apiKey: API_KEY, apiUrl: standinOf().url, sandboxUrl: standinOf().url }
          yield* Effect.promise(() => Sandbox.kill(sandbox.sandboxID, elsewhere))
          // The watch looks every 5 s.
          yield* expectDisconnected(
            rt,
            `E2B no longer has sandbox ${sandbox.sandboxID} (killed, or its timeout ran out)`
          )
        })),
    120_000
  )

  it.live("no API key at all is an InvalidOptionsError naming E2B_API_KEY", () =>
    Effect.gen(function*() {
      const saved = process.env["E2B_API_KEY"]
      delete process.env["E2B_API_KEY"]
      const { apiKey: _, ...rest } = standinOptions(standinOf())
      const error = yield* startError(E2BRuntime.layer(rest)).pipe(
        Effect.ensuring(Effect.sync(() => saved === undefined || (process.env["E2B_API_KEY"] = saved)))
      )
      assert.strictEqual(
        (error as Error).message,
        "E2BRuntime options: no apiKey given and E2B_API_KEY is not set (an E2B team API key, e2b_...)."
      )
    }))

  it.live(
    "create sends the timeout and our metadata; the timeout is renewed while the owner lives",
    () =>
      Effect.gen(function*() {
        const before = standinOf().calls.length
        yield* inSandbox(standinOf(), { sessionId: "e2b-ttl-test", idleTimeout: "6 seconds" }, (rt) =>
          Effect.gen(function*() {
            const create = creates(standinOf()).at(-1)!
            const body = create.body as { timeout: number; templateID: string; metadata: Record<string, string> }
            assert.strictEqual(body.timeout, 6)
            assert.strictEqual(body.templateID, "effect-sandbox-runtime")
            assert.strictEqual(body.metadata["effect-sandbox.session"], "e2b-ttl-test")
            assert.strictEqual(body.metadata["effect-sandbox.owner.pid"], String(process.pid))
            assert.strictEqual(rt.info.id, "e2b-ttl-test")
            // Past the 6 s timeout: alive, because the owner renewed it (every 2 s). Not shorter: on a
            // loaded machine a renewal can take a second or more.
            yield* Effect.sleep("7 seconds")
            const obs = yield* rt.runCommand("echo still-here")
            assert.strictEqual(obs.content.trim(), "still-here")
            const sandboxId = [...standinOf().sandboxes.values()].find((s) =>
              s.metadata["effect-sandbox.session"] === "e2b-ttl-test"
            )!
              .sandboxID
            const renewals = standinOf().calls.slice(before).filter((c) =>
              c.path === `/sandboxes/${sandboxId}/timeout`
            )
            assert.isAtLeast(renewals.length, 3)
            assert.deepStrictEqual(renewals[0]!.body, { timeout: 6 })
          }))
      }),
    120_000
  )

  it.live(
    "pause freezes the sandbox (docker pause) and cuts its connections; resume brings back its shell, memory included",
    () =>
      Effect.gen(function*() {
        yield* inSandbox(standinOf(), {}, (rt) =>
          Effect.gen(function*() {
            yield* rt.runCommand("export KEPT_IN_MEMORY=yes")
            const cutBefore = standinOf().cuts.length
            yield* rt.pause
            const sandbox = [...standinOf().sandboxes.values()].at(-1)!
            // E2B snapshots the VM: every connection into it is cut, the runtime's pooled one to the
            // server's port too, and the runtime connects anew after the resume.
            const cut = standinOf().cuts.slice(cutBefore).filter((c) => c.sandbox === sandbox.sandboxID)
            assert.include(cut.map((c) => c.kind), "traffic")
            assert.strictEqual(sandbox.state, "paused")
            const inspected = yield* Effect.promise(() => docker.getContainer(sandbox.container).inspect())
            assert.strictEqual(inspected.State.Paused, true)
            assert.deepStrictEqual(standinOf().calls.at(-1), {
              method: "POST",
              path: `/sandboxes/${sandbox.sandboxID}/pause`,
              body: { memory: true }
            })
            yield* rt.resume
            const obs = yield* rt.runCommand("echo $KEPT_IN_MEMORY")
            assert.strictEqual(obs.content.trim(), "yes")
          }))
      }),
    120_000
  )

  it.live(
    "a kept-alive sandbox is attached to by session id, and removed by the last release",
    () =>
      Effect.gen(function*() {
        const sessionId = `e2b-attach-${process.pid}`
        const first = yield* buildRuntime(
          E2BRuntime.layer(
            standinOptions(standinOf(), { sessionId, sandbox: new SandboxConfig({ keepRuntimeAlive: true }) })
          )
        )
        yield* first.rt.run(new CmdRunAction({ command: "echo kept > /workspace/kept.txt" }))
        yield* first.release
        assert.strictEqual((yield* Effect.promise(() => standinOf().containers())).length, 1)
        const second = yield* buildRuntime(E2BRuntime.layer(standinOptions(standinOf(), { sessionId })))
        const obs = yield* second.rt.runCommand("cat /workspace/kept.txt")
        assert.strictEqual(obs.content.trim(), "kept")
        yield* second.release
        assert.deepStrictEqual(yield* Effect.promise(() => standinOf().containers()), [])
      }),
    120_000
  )

  it.live("the reaper kills the sandboxes of an owner of this host that is gone", () =>
    Effect.gen(function*() {
      // A pid that was ours to see die: a finished child's.
      const dead = spawnSync("true").pid
      const orphan = yield* Effect.promise(() =>
        Sandbox.create("base", {
          apiKey: API_KEY,
          apiUrl: standinOf().url,
          sandboxUrl: standinOf().url,
          metadata: {
            "effect-sandbox.managed": "true",
            "effect-sandbox.session": "orphan",
            "effect-sandbox.owner.host": hostname(),
            "effect-sandbox.owner.pid": String(dead),
            "effect-sandbox.keep-alive": "false"
          }
        })
      )
      assert.isTrue(standinOf().sandboxes.has(orphan.sandboxId))
      const { release } = yield* buildRuntime(E2BRuntime.layer(standinOptions(standinOf())))
      // The reaper's first pass runs as the layer starts, beside the sandbox's start.
      yield* Effect.sleep("100 millis").pipe(
        Effect.repeat({ until: () => !standinOf().sandboxes.has(orphan.sandboxId), times: 100 })
      )
      assert.isFalse(standinOf().sandboxes.has(orphan.sandboxId))
      yield* release
      assert.deepStrictEqual(yield* Effect.promise(() => standinOf().containers()), [])
    }), 120_000)
})
