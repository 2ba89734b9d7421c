import { LocalRuntime } from "../../src/local.ts"
import { chromiumAvailable } from "./chromium.ts"
import { kernelAvailable } from "./kernel.ts"
import { everythingServer } from "./mcp.ts"
import { runConformance } from "./suite.ts"

const plugins = kernelAvailable() ? ["agent_skills" as const, "jupyter" as const] : []
const browser = chromiumAvailable()

runConformance({
  name: "LocalRuntime",
  layer: ({ noChangeTimeoutSeconds }) =>
    LocalRuntime.layer({ noChangeTimeoutSeconds, plugins, browser, mcpServers: [everythingServer] }),
  // The action server, like OpenHands', does not confine paths: a container is the boundary.
  restrictedToWorkspace: false,
  capabilities: { pause: false, ipython: plugins.length > 0, browser, mcp: true }
})
