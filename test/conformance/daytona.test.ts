/**
 * The conformance suite against DaytonaRuntime, driven through the real `@daytonaio/sdk` against
 * the Daytona stand-in (test/providers/daytona: Daytona's REST, toolbox and preview API over
 * Docker containers), on the snapshot made from the base image's runtime image: the image
 * contract alone, so the IPython, browser and MCP cases are skipped as on every base-image target.
 */
import { describeDocker } from "../docker/infra.ts"
import { daytonaLayer, useStandIn } from "../providers/daytona/infra.ts"
import { daytonaLifecycle } from "./hosted/daytona.ts"
import { hostedLifecycleConformance } from "./hostedLifecycle.ts"
import { runConformance } from "./suite.ts"

describeDocker("daytona (stand-in, base image snapshot)", () => {
  const standIn = useStandIn()
  runConformance({
    name: "DaytonaRuntime (stand-in)",
    layer: ({ noChangeTimeoutSeconds }) => daytonaLayer(standIn(), { noChangeTimeoutSeconds }),
    containsProcesses: true,
    capabilities: { pause: true, ipython: false, browser: false, mcp: false, snapshot: true }
  })
  hostedLifecycleConformance(
    daytonaLifecycle(() => ({ standin: { apiUrl: standIn().apiUrl, apiKey: standIn().apiKey } }))
  )
})
