/**
 * Once the provisioner has seen the sandbox stop, the client sends nothing more: the address of
 * a dead container or pod is given to the next sandbox that starts, which must not receive this
 * session's key. A plain HTTP server stands where the sandbox was and counts what reaches it.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { makeActionClient } from "../../src/client/ActionClient.ts"
import { CmdRunAction } from "../../src/index.ts"
import { makeStatus } from "../../src/runtime/statusCell.ts"
import { toolCapabilities } from "../../src/serverStart/serverTools.ts"

/** An HTTP server on 127.0.0.1 that answers `status` to everything and records the keys it was sent. */
const recordingServer = (status = 503) =>
  Effect.acquireRelease(
    Effect.promise(() => {
      const keys: Array<string | undefined> = []
      const server = createServer((request, response) => {
        keys.push(request.headers["x-session-api-key"] as string | undefined)
        response.writeHead(status, { "content-type": "application/json" }).end(
          JSON.stringify({ detail: "Invalid API Key" })
        )
      })
      return new Promise<{ keys: typeof keys; url: string; close: () => void }>((resolve) =>
        server.listen(0, "127.0.0.1", () =>
          resolve({
            keys,
            url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
            close: () => server.close()
          }))
      )
    }),
    (server) => Effect.sync(server.close)
  )

describe("ActionClient after the sandbox stopped", () => {
  it.live("sends no request, and so no key, once sandboxGone says so", () =>
    Effect.gen(function*() {
      const server = yield* recordingServer()
      let gone = false
      const client = yield* makeActionClient({
        baseUrl: server.url,
        sessionApiKey: Redacted.make("the-session-key"),
        info: {
          id: "gone",
          kind: "test",
          workspace: "/workspace",
          urls: {},
          capabilities: toolCapabilities({}, { pause: false })
        },
        defaultTimeoutSeconds: 5,
        status: yield* makeStatus,
        sandboxGone: () => gone
      })
      const action = new CmdRunAction({ command: "echo hi" })
      // While the sandbox runs, requests go out (this one meets a 503).
      const before = yield* Effect.flip(client.execute(action))
      assert.strictEqual(before._tag, "RuntimeDisconnectedError")
      assert.deepStrictEqual(server.keys, ["the-session-key"])

      gone = true
      const after = yield* Effect.flip(client.execute(action))
      assert.strictEqual(after._tag, "RuntimeDisconnectedError")
      assert.include(after.message, "the sandbox has stopped")
      assert.deepStrictEqual(server.keys, ["the-session-key"], "nothing was sent after the sandbox stopped")
    }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici)))

  // The sandbox's host port, freed when it stopped, may be taken by another listener before the
  // watch has noticed: its 401 to our key is a lost session, not a bad request (CI met it so).
  it.live("a refused key once the sandbox has stopped is a disconnect; while it runs, the refusal it is", () =>
    Effect.gen(function*() {
      const server = yield* recordingServer(401)
      let why: string | undefined = undefined
      const status = yield* makeStatus
      const client = yield* makeActionClient({
        baseUrl: server.url,
        sessionApiKey: Redacted.make("the-session-key"),
        info: {
          id: "taken-port",
          kind: "test",
          workspace: "/workspace",
          urls: {},
          capabilities: toolCapabilities({}, { pause: false })
        },
        defaultTimeoutSeconds: 5,
        status,
        explainDisconnect: Effect.sync(() => why)
      })
      const action = new CmdRunAction({ command: "echo hi" })
      const running = yield* Effect.flip(client.execute(action))
      assert.strictEqual(running._tag, "RuntimeRequestError")
      assert.strictEqual(running.message, "Invalid API Key")

      why = "the container exited with code 137"
      const stopped = yield* Effect.flip(client.execute(action))
      assert.strictEqual(stopped._tag, "RuntimeDisconnectedError")
      assert.strictEqual(
        stopped.message,
        `The action server at ${server.url} stopped answering (execute_action): the container exited with code 137. ` +
          "Its session is lost; start a new runtime."
      )
      assert.strictEqual(yield* status.get, "ERROR_RUNTIME_DISCONNECTED")
    }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici)))
})
