import { CliRuntime } from "../../src/index.ts"
import { runConformance } from "./suite.ts"

runConformance({
  name: "CliRuntime",
  layer: ({ noChangeTimeoutSeconds }) => CliRuntime.layer({ noChangeTimeoutSeconds }),
  restrictedToWorkspace: true
})
