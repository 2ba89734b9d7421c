/**
 * Interrupting an action in process (CliRuntime) stops what it started, for
 * every action type: the shell's command, the IPython cell, the browser's
 * navigation, the MCP tool call (see test/conformance/interruption.ts).
 */
import { describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { CliRuntime, Runtime } from "../../src/index.ts"
import { chromiumAvailable } from "../conformance/chromium.ts"
import { hangingSite, interruptionCases, slowMcpServer } from "../conformance/interruption.ts"
import { kernelAvailable } from "../conformance/kernel.ts"

const have = { shell: true, ipython: kernelAvailable(), browser: chromiumAvailable(), mcp: true }

describe("interrupting an action in process", () => {
  layer(
    CliRuntime.layer({
      ipython: have.ipython ? { agentSkills: false } : false,
      browser: have.browser,
      mcp: { stdio: [slowMcpServer] }
    }),
    { excludeTestServices: true, timeout: 60_000 }
  )("CliRuntime", (it) => {
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
