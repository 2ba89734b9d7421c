/** A runtime whose backend is the HTTP ActionClient aimed at `baseUrl`: for tests against a scripted server. */
import { Effect, Redacted } from "effect"
import { makeActionClient } from "../../src/client/ActionClient.ts"
import { makeRuntime } from "../../src/runtime/makeRuntime.ts"
import { makeStatus } from "../../src/runtime/statusCell.ts"

export const clientRuntime = (baseUrl: string, sessionApiKey: string) =>
  Effect.gen(function*() {
    const status = yield* makeStatus
    yield* status.set("READY")
    const backend = yield* makeActionClient({
      baseUrl,
      sessionApiKey: Redacted.make(sessionApiKey),
      defaultTimeoutSeconds: 5,
      status,
      info: {
        id: "s",
        kind: "local",
        workspace: "/w",
        urls: {},
        capabilities: { pause: false, ipython: false, browser: false, mcp: false, snapshot: false }
      }
    })
    return makeRuntime(backend, status)
  })
