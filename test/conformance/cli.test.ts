import { CliRuntime } from "../../src/index.ts"
import { kernelAvailable } from "./kernel.ts"
import { runConformance } from "./suite.ts"

const ipython = kernelAvailable()

runConformance({
  name: "CliRuntime",
  layer: ({ noChangeTimeoutSeconds }) => CliRuntime.layer({ noChangeTimeoutSeconds, ipython }),
  restrictedToWorkspace: true
})
