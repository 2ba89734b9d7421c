/**
 * Reaching the server from outside the cluster: through a listener on 127.0.0.1 whose
 * connections ride the API server's port-forward WebSocket. When the stand-in cuts every
 * forward (an API server restart, an idle timeout), the next action opens a fresh one and
 * succeeds. `connect: "direct"` reaches the pod IP instead (the stand-in's pods are on the Docker
 * bridge, reachable from here, as pods are from inside a cluster). Release closes the listener.
 */
import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { connect } from "node:net"
import { CmdOutputObservation, CmdRunAction } from "../../src/index.ts"
import { buildRuntime } from "../docker/helpers.ts"
import { describeDocker } from "../docker/infra.ts"
import { standInLayer, useStandIn } from "./helpers.ts"

/** Whether a TCP connection to `url`'s port on 127.0.0.1 is accepted. */
const accepts = (url: string) =>
  Effect.callback<boolean>((resume) => {
    const socket = connect(Number(new URL(url).port), "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.succeed(true))
    })
    socket.once("error", () => resume(Effect.succeed(false)))
  })

const echo = (text: string) => new CmdRunAction({ command: `echo ${text}` })

describeDocker("KubernetesRuntime connections (stand-in)", () => {
  const cluster = useStandIn()

  it.live("re-opens a dropped port-forward: the action after the drop succeeds", () =>
    Effect.gen(function*() {
      const { rt, release } = yield* buildRuntime(
        standInLayer(cluster, { connect: "portForward", deleteWorkspace: true })
      )
      const url = rt.info.urls["actionServer"]!
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/)
      const before = yield* rt.run(echo("before"))
      assert.instanceOf(before, CmdOutputObservation)
      assert.strictEqual(before.content.trim(), "before")
      assert.isAtLeast(cluster.standIn.dropPortForwards(), 1)
      // The drop reaches this side in milliseconds (an agent's next call comes far later).
      yield* Effect.sleep("200 millis")
      const after = yield* rt.run(echo("after"))
      assert.instanceOf(after, CmdOutputObservation)
      assert.strictEqual(after.exitCode, 0)
      assert.strictEqual(after.content.trim(), "after")
      // Every forward cut again, mid-session: still served.
      assert.isAtLeast(cluster.standIn.dropPortForwards(), 1)
      yield* Effect.sleep("200 millis")
      assert.strictEqual((yield* rt.run(echo("again"))).content.trim(), "again")
      yield* release
      assert.isFalse(yield* accepts(url), "the listener outlived the runtime")
    }), 180_000)

  it.live("reaches the pod IP with connect: direct", () =>
    Effect.gen(function*() {
      const { rt, release } = yield* buildRuntime(standInLayer(cluster, { connect: "direct", deleteWorkspace: true }))
      const out = yield* rt.run(new CmdRunAction({ command: "hostname" }))
      assert.strictEqual(out.content.trim(), `effect-sandbox-${rt.info.id}`)
      // No port-forward carries it: cutting them all changes nothing.
      assert.strictEqual(cluster.standIn.dropPortForwards(), 0)
      yield* release
    }), 180_000)

  it.live(
    "reaches an app port through a listener of its own (appPorts), closed on release",
    () =>
      Effect.gen(function*() {
        const { rt, release } = yield* buildRuntime(
          standInLayer(cluster, { connect: "portForward", appPorts: [9000], deleteWorkspace: true })
        )
        const app = rt.info.urls["app-9000"]!
        assert.match(app, /^http:\/\/127\.0\.0\.1:\d+$/)
        assert.notStrictEqual(app, rt.info.urls["actionServer"])
        yield* rt.run(
          new CmdRunAction({
            command: "mkdir -p /tmp/app && echo app-ok > /tmp/app/index.html && " +
              "(cd /tmp/app && nohup python3 -m http.server 9000 >/dev/null 2>&1 &)"
          })
        )
        const served = yield* Effect.promise(async () => {
          for (let tries = 0; tries < 100; tries++) {
            const answer = await fetch(`${app}/index.html`).then((r) => r.ok ? r.text() : undefined, () => undefined)
            if (answer !== undefined) return answer
            await new Promise((resolve) => setTimeout(resolve, 100))
          }
          return "never answered"
        })
        assert.strictEqual(served.trim(), "app-ok")
        yield* release
        assert.isFalse(yield* accepts(app), "the app port's listener outlived the runtime")
      }),
    180_000
  )
})
