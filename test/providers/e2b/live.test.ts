/**
 * The conformance suite against the real E2B service, opt-in: it runs when `E2B_API_KEY` is set
 * (with `E2B_TEMPLATE`, default `effect-sandbox-runtime`, made as docs/runtimes/e2b.md says), and
 * is skipped with a message otherwise, in CI too: CI holds no E2B account. The hosted lifecycle
 * suite (pause, attach, reaper, a server dying at start, release) runs with it.
 */
import { describe } from "@effect/vitest"
import { E2BRuntime } from "../../../src/e2b.ts"
import { e2bLifecycle } from "../../conformance/hosted/e2b.ts"
import { hostedLifecycleConformance } from "../../conformance/hostedLifecycle.ts"
import { runConformance } from "../../conformance/suite.ts"

const apiKey = process.env["E2B_API_KEY"]
const template = process.env["E2B_TEMPLATE"] ?? "effect-sandbox-runtime"

if (apiKey === undefined || apiKey === "") {
  describe.skip("e2b live (skipped: set E2B_API_KEY, and E2B_TEMPLATE if not effect-sandbox-runtime, to run it)", () => {
    runConformance({
      name: "E2BRuntime (live)",
      layer: () => E2BRuntime.layer({ template }),
      capabilities: { pause: true, ipython: false, browser: false, mcp: false, snapshot: false }
    })
    hostedLifecycleConformance(e2bLifecycle(() => ({ template })))
  })
} else {
  describe("e2b live", () => {
    runConformance({
      name: `E2BRuntime (live, template ${template})`,
      // The key through E2B_API_KEY, as a user's would: Effect Config reads it.
      layer: ({ noChangeTimeoutSeconds }) => E2BRuntime.layer({ template, noChangeTimeoutSeconds }),
      containsProcesses: true,
      capabilities: { pause: true, ipython: false, browser: false, mcp: false, snapshot: false }
    })
    // Pause, attach, the reaper, a dying server and release, against E2B itself.
    hostedLifecycleConformance(e2bLifecycle(() => ({ template })))
  })
}
