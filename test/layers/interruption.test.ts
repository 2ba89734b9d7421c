/**
 * Interrupting an action over HTTP (LocalRuntime) stops what it started, for
 * every action type: the client's interruption aborts the request, the server
 * interrupts its handler, and the tool stops (see test/conformance/interruption.ts).
 */
import { describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { LocalRuntime, Runtime } from "../../src/index.ts"
import { chromiumAvailable } from "../conformance/chromium.ts"
import { hangingSite, interruptionCases, slowMcpServer } from "../conformance/interruption.ts"
import { kernelAvailable } from "../conformance/kernel.ts"

const have = { shell: true, ipython: kernelAvailable(), browser: chromiumAvailable(), mcp: true }

describe("interrupting an action over HTTP", () => {
  layer(
    LocalRuntime.layer({
      plugins: have.ipython ? ["jupyter"] : [],
      browser: have.browser,
      mcpServers: [slowMcpServer]
    }),
    { excludeTestServices: true, timeout: 60_000 }
  )("LocalRuntime", (it) => {
    for (const c of interruptionCases) {
      it.effect.skipIf(!have[c.needs])(
        `${c.action}: stops what it started, and the session still answers`,
        () =>
          Effect.gen(function*() {
            yield* c.check(yield* Runtime, yield* hangingSite)
          }).pipe(Effect.scoped),
        { timeout: 30_000 }
      )
    }
  })
})
