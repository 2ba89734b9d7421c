import { LocalRuntime } from "../../src/local.ts"
import { chromiumAvailable } from "./chromium.ts"
import { kernelAvailable } from "./kernel.ts"
import { everythingServer } from "./mcp.ts"
import { streamPropertyConformance } from "./streamProperty.ts"
import { type ConformanceTarget, runConformance } from "./suite.ts"

const ipython = kernelAvailable()
const browser = chromiumAvailable()

const target = {
  name: "LocalRuntime",
  layer: ({ noChangeTimeoutSeconds }) =>
    LocalRuntime.layer({ noChangeTimeoutSeconds, ipython, browser, mcp: { stdio: [everythingServer] } }),
  capabilities: { pause: false, ipython, browser, mcp: true, snapshot: false },
  toolless: { layer: ({ noChangeTimeoutSeconds }) => LocalRuntime.layer({ noChangeTimeoutSeconds }) }
} satisfies ConformanceTarget

runConformance(target)
// Cli and Local cover both transports (in process, HTTP): the property is not repeated per provider.
streamPropertyConformance(target)
