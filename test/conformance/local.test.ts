import { LocalRuntime } from "../../src/local.ts"
import { chromiumAvailable } from "./chromium.ts"
import { kernelAvailable } from "./kernel.ts"
import { everythingServer } from "./mcp.ts"
import { runConformance } from "./suite.ts"

const ipython = kernelAvailable()
const browser = chromiumAvailable()

runConformance({
  name: "LocalRuntime",
  layer: ({ noChangeTimeoutSeconds }) =>
    LocalRuntime.layer({ noChangeTimeoutSeconds, ipython, browser, mcp: { stdio: [everythingServer] } }),
  capabilities: { pause: false, ipython, browser, mcp: true },
  toolless: { layer: ({ noChangeTimeoutSeconds }) => LocalRuntime.layer({ noChangeTimeoutSeconds }) }
})
