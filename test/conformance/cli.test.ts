import { CliRuntime } from "../../src/index.ts"
import { kernelAvailable } from "./kernel.ts"
import { everythingServer } from "./mcp.ts"
import { runConformance } from "./suite.ts"

const ipython = kernelAvailable()

runConformance({
  name: "CliRuntime",
  layer: ({ noChangeTimeoutSeconds }) =>
    CliRuntime.layer({ noChangeTimeoutSeconds, ipython, mcp: { stdio: [everythingServer] } }),
  restrictedToWorkspace: true
})
