/**
 * The conformance suite against the real Runloop service, opt-in: it runs when `RUNLOOP_API_KEY`
 * is set (with `RUNLOOP_BLUEPRINT`, default `effect-sandbox-runtime`, made as
 * docs/runtimes/runloop.md says), and is skipped with a message otherwise, in CI too: CI holds no
 * Runloop account. The hosted lifecycle suite (suspend, attach, reaper, a server dying at start,
 * release) runs with it.
 */
import { describe } from "@effect/vitest"
import { RunloopRuntime } from "../../../src/runloop.ts"
import { runloopLifecycle } from "../../conformance/hosted/runloop.ts"
import { hostedLifecycleConformance } from "../../conformance/hostedLifecycle.ts"
import { runConformance } from "../../conformance/suite.ts"

const apiKey = process.env["RUNLOOP_API_KEY"]
const blueprint = process.env["RUNLOOP_BLUEPRINT"] ?? "effect-sandbox-runtime"

if (apiKey === undefined || apiKey === "") {
  describe.skip(
    "runloop live (skipped: set RUNLOOP_API_KEY, and RUNLOOP_BLUEPRINT if not effect-sandbox-runtime, to run it)",
    () => {
      runConformance({
        name: "RunloopRuntime (live)",
        layer: () => RunloopRuntime.layer({ blueprint }),
        capabilities: { pause: true, ipython: false, browser: false, mcp: false, snapshot: false }
      })
      hostedLifecycleConformance(runloopLifecycle(() => ({ blueprint })))
    }
  )
} else {
  describe("runloop live", () => {
    runConformance({
      name: `RunloopRuntime (live, blueprint ${blueprint})`,
      // The key through RUNLOOP_API_KEY, as a user's would: Effect Config reads it.
      layer: ({ noChangeTimeoutSeconds }) => RunloopRuntime.layer({ blueprint, noChangeTimeoutSeconds }),
      containsProcesses: true,
      capabilities: { pause: true, ipython: false, browser: false, mcp: false, snapshot: false }
    })
    // Suspend and resume, attach, the reaper, a dying server and release, against Runloop itself.
    hostedLifecycleConformance(runloopLifecycle(() => ({ blueprint })))
  })
}
