import { LocalRuntime } from "../../src/index.ts"
import { kernelAvailable } from "./kernel.ts"
import { runConformance } from "./suite.ts"

const plugins = kernelAvailable() ? ["jupyter" as const] : []

runConformance({
  name: "LocalRuntime",
  layer: ({ noChangeTimeoutSeconds }) => LocalRuntime.layer({ noChangeTimeoutSeconds, plugins }),
  // The action server, like OpenHands', does not confine paths: a container is the boundary.
  restrictedToWorkspace: false
})
