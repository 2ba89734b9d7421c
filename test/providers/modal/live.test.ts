/**
 * The conformance suite against Modal itself, opt-in: it runs when `MODAL_TOKEN_ID` and
 * `MODAL_TOKEN_SECRET` are set (with `MODAL_IMAGE`, default `effect-sandbox-runtime`, published as
 * docs/runtimes/modal.md says), and is skipped with a message otherwise, in CI too: CI holds no
 * Modal account. The hosted lifecycle suite (attach, reaper, a server dying at start, release)
 * runs with it.
 */
import { describe } from "@effect/vitest"
import { ModalRuntime } from "../../../src/modal.ts"
import { modalLifecycle } from "../../conformance/hosted/modal.ts"
import { hostedLifecycleConformance } from "../../conformance/hostedLifecycle.ts"
import { runConformance } from "../../conformance/suite.ts"

const configured = (process.env["MODAL_TOKEN_ID"] ?? "") !== "" && (process.env["MODAL_TOKEN_SECRET"] ?? "") !== ""
const image = process.env["MODAL_IMAGE"] ?? "effect-sandbox-runtime"

describe.skipIf(!configured)(
  configured
    ? `Modal live (image ${image})`
    : "Modal live (skipped: set MODAL_TOKEN_ID and MODAL_TOKEN_SECRET, and MODAL_IMAGE if not effect-sandbox-runtime, to run it)",
  () => {
    runConformance({
      name: "ModalRuntime (live)",
      // The token pair through the variables, as a user's would: Effect Config reads them.
      layer: ({ noChangeTimeoutSeconds }) => ModalRuntime.layer({ image, noChangeTimeoutSeconds }),
      containsProcesses: true,
      capabilities: { pause: false, ipython: false, browser: false, mcp: false, snapshot: true }
    })
    // Attach, the reaper, a dying server and release, against Modal itself.
    hostedLifecycleConformance(modalLifecycle(() => ({ image })))
  }
)
