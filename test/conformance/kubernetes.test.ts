/**
 * The conformance suite against KubernetesRuntime on the Kubernetes stand-in (test/kubernetes/
 * standin/: the real REST API, pods as containers on the local engine), the runtime driven through
 * client-node from the stand-in's kubeconfig file and reached through the API server's
 * port-forward (the default outside a cluster). The pod runs the tools image with IPython and the
 * browser. No MCP server: the suite's fixture is bind-mounted from the host, and a pod mounts only
 * PVCs and emptyDirs (the MCP cases skip, saying so).
 */
import { afterAll, assert, beforeAll } from "@effect/vitest"
import { CoreV1Api } from "@kubernetes/client-node"
import { Effect, Layer } from "effect"
import { vi } from "vitest"
import { describeDocker } from "../docker/infra.ts"
import { standInLayer, useStandIn } from "../kubernetes/helpers.ts"
import { leftovers } from "../kubernetes/standin/docker.ts"
import { kubernetesLifecycle } from "./hosted/kubernetes.ts"
import { hostedLifecycleConformance } from "./hostedLifecycle.ts"
import { runConformance } from "./suite.ts"

// A case starts its own pod (API calls, a container, the readiness probe, the watch) and waits for
// it to be gone on release: seconds more than a container, which on a loaded machine took the
// browser cases past the suite's 30 s.
vi.setConfig({ testTimeout: 60_000 })

/**
 * `EFFECT_SANDBOX_K8S_MODE=agentSandbox` runs the suite on agent-sandbox Sandboxes instead of bare
 * pods: by hand, as CI's time allows one mode here (agentSandboxRuntime.test.ts covers the other).
 */
const mode = process.env["EFFECT_SANDBOX_K8S_MODE"] === "agentSandbox" ? "agentSandbox" : "pod"

describeDocker(`kubernetes (stand-in, tools image, ${mode} mode)`, () => {
  // A cluster with the CSI snapshotter: forks are VolumeSnapshots of the workspace (bare pods only).
  const cluster = useStandIn({ volumeSnapshots: { classes: [{ name: "standin-snapshots", default: true }] } })
  const withTools = (noChangeTimeoutSeconds: number) =>
    standInLayer(cluster, { noChangeTimeoutSeconds, ipython: true, browser: true, deleteWorkspace: true, mode })

  // The first start builds the runtime image (a minute on a busy machine): here, not in the first case's 30 s.
  beforeAll(() => Effect.runPromise(Effect.scoped(Layer.build(withTools(10)))), 300_000)

  runConformance({
    name: "KubernetesRuntime (stand-in, tools image: jupyter, agent_skills, browser)",
    layer: ({ noChangeTimeoutSeconds }) => withTools(noChangeTimeoutSeconds),
    containsProcesses: true,
    capabilities: { pause: true, ipython: true, browser: true, mcp: false, snapshot: mode === "pod" },
    toolless: {
      layer: ({ noChangeTimeoutSeconds }) =>
        standInLayer(cluster, { noChangeTimeoutSeconds, deleteWorkspace: true, mode })
    }
  })

  hostedLifecycleConformance(
    kubernetesLifecycle(() => ({ kubeconfigPath: cluster.standIn.kubeconfigPath, baseImage: cluster.image, mode }))
  )

  afterAll(async () => {
    // Every conformance test released its runtime: no pod, PVC, container or volume may remain.
    const core = cluster.kubeConfig.makeApiClient(CoreV1Api)
    const selector = { namespace: "default", labelSelector: "effect-sandbox.managed=true" }
    assert.deepStrictEqual((await core.listNamespacedPod(selector)).items, [])
    assert.deepStrictEqual((await core.listNamespacedPersistentVolumeClaim(selector)).items, [])
    assert.deepStrictEqual(await leftovers(cluster.standIn.instance), { containers: [], volumes: [] })
  })
})
