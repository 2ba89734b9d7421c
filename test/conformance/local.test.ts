import { LocalRuntime } from "../../src/index.ts"
import { kernelAvailable } from "./kernel.ts"
import { everythingServer } from "./mcp.ts"
import { runConformance } from "./suite.ts"

const plugins = kernelAvailable() ? ["agent_skills" as const, "jupyter" as const] : []

runConformance({
  name: "LocalRuntime",
  layer: ({ noChangeTimeoutSeconds }) =>
    LocalRuntime.layer({ noChangeTimeoutSeconds, plugins, mcpServers: [everythingServer] }),
  // The action server, like OpenHands', does not confine paths: a container is the boundary.
  restrictedToWorkspace: false
})
