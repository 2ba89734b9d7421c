/**
 * Opt-in: the conformance suite against Daytona itself, when `DAYTONA_API_KEY` is set (with
 * `DAYTONA_API_URL` / `DAYTONA_TARGET` if not the cloud's defaults, and `DAYTONA_SNAPSHOT` if the
 * snapshot made as docs/runtimes/daytona.md says is not named `effect-sandbox-runtime`). Without a
 * key it is skipped with a message saying so, in CI too: CI has no Daytona account. The hosted
 * lifecycle suite (pause, attach, reaper, a server dying at start, release) runs with it, pause
 * only where the snapshot's class is one Daytona pauses (and then the runtime must offer it; where
 * it is not, the runtime must not).
 */
import { Daytona } from "@daytonaio/sdk"
import { describe } from "@effect/vitest"
import { DaytonaRuntime, DEFAULT_SNAPSHOT } from "../../../src/daytona.ts"
import { PAUSING_CLASSES } from "../../../src/providers/daytona/states.ts"
import { daytonaLifecycle } from "../../conformance/hosted/daytona.ts"
import { hostedLifecycleConformance } from "../../conformance/hostedLifecycle.ts"
import { runConformance } from "../../conformance/suite.ts"

const key = process.env["DAYTONA_API_KEY"] ?? ""
const snapshot = process.env["DAYTONA_SNAPSHOT"]

/** Whether Daytona pauses sandboxes of the snapshot: its class, as Daytona reports it. */
const pauses = key === "" ? false : PAUSING_CLASSES.includes(
  (await new Daytona().snapshot.get(snapshot ?? DEFAULT_SNAPSHOT)).sandboxClass ?? "container"
)
const { pause: _, ...withoutPause } = daytonaLifecycle(() => (snapshot === undefined ? {} : { snapshot }))

describe.skipIf(key === "")(
  key === ""
    ? "Daytona live (skipped: set DAYTONA_API_KEY, and DAYTONA_SNAPSHOT if not effect-sandbox-runtime, to run it)"
    : "Daytona live",
  () => {
    runConformance({
      name: "DaytonaRuntime (live)",
      layer: ({ noChangeTimeoutSeconds }) =>
        DaytonaRuntime.layer({ noChangeTimeoutSeconds, ...(snapshot === undefined ? {} : { snapshot }) }),
      containsProcesses: true,
      capabilities: { pause: pauses, ipython: false, browser: false, mcp: false, snapshot: false }
    })
    // Pause (where the class allows it), attach, the reaper, a dying server and release, against Daytona itself.
    hostedLifecycleConformance(
      pauses ? daytonaLifecycle(() => (snapshot === undefined ? {} : { snapshot })) : withoutPause
    )
  }
)
