import { LocalRuntime } from "../../src/index.ts"
import { runConformance } from "./suite.ts"

runConformance({
  name: "LocalRuntime",
  layer: ({ noChangeTimeoutSeconds }) => LocalRuntime.layer({ noChangeTimeoutSeconds }),
  // The action server, like OpenHands', does not confine paths: a container is the boundary.
  restrictedToWorkspace: false
})
