/**
 * The conformance suite against RunloopRuntime, driven through the real `@runloop/api-client`
 * (over its HTTP/2 transport) against the Runloop stand-in (test/providers/runloop: Runloop's REST
 * API over Docker containers, tunnels to their ports), on the blueprint made from the base
 * image's runtime image: the image contract alone, so the IPython, browser and MCP cases are
 * skipped as on every base-image target.
 */
import { DEFAULT_BLUEPRINT } from "../../src/runloop.ts"
import { describeDocker } from "../docker/infra.ts"
import { runloopLayer, useStandIn } from "../providers/runloop/fixture.ts"
import { runloopLifecycle } from "./hosted/runloop.ts"
import { hostedLifecycleConformance } from "./hostedLifecycle.ts"
import { runConformance } from "./suite.ts"

describeDocker("runloop (stand-in, base image blueprint)", () => {
  const standIn = useStandIn()
  runConformance({
    name: "RunloopRuntime (stand-in)",
    layer: ({ noChangeTimeoutSeconds }) => runloopLayer(standIn(), { noChangeTimeoutSeconds }),
    containsProcesses: true,
    capabilities: { pause: true, ipython: false, browser: false, mcp: false, snapshot: true }
  })
  hostedLifecycleConformance(runloopLifecycle(() => {
    const { baseUrl, apiKey, tunnelUrl } = standIn()
    return { blueprint: DEFAULT_BLUEPRINT, standin: { baseUrl, apiKey, tunnels: new URL(tunnelUrl(0, "")).origin } }
  }))
})
