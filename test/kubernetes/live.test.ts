/**
 * The conformance suite against a real cluster, opt-in: with `EFFECT_SANDBOX_K8S_LIVE=1` and a
 * kubeconfig (`KUBECONFIG` or ~/.kube/config) it runs KubernetesRuntime through the default
 * kubeconfig, on the image `EFFECT_SANDBOX_K8S_IMAGE` names (one the cluster can pull:
 * docs/runtimes/kubernetes.md says how to push it), in `EFFECT_SANDBOX_K8S_NAMESPACE` (default the
 * context's), then the hosted lifecycle suite (pause, attach, reaper, a server dying at start,
 * release). Otherwise, CI included (no cluster there), it is skipped with a message saying so.
 */
import { describe } from "@effect/vitest"
import { existsSync } from "node:fs"
import { homedir } from "node:os"
import { join } from "node:path"
import { KubernetesRuntime } from "../../src/kubernetes.ts"
import { kubernetesLifecycle } from "../conformance/hosted/kubernetes.ts"
import { hostedLifecycleConformance } from "../conformance/hostedLifecycle.ts"
import { runConformance } from "../conformance/suite.ts"

const kubeconfig = process.env["KUBECONFIG"] ?? join(homedir(), ".kube", "config")
const image = process.env["EFFECT_SANDBOX_K8S_IMAGE"]
const why = process.env["EFFECT_SANDBOX_K8S_LIVE"] !== "1"
  ? "EFFECT_SANDBOX_K8S_LIVE=1 is not set"
  : !existsSync(kubeconfig)
  ? `no kubeconfig at ${kubeconfig}`
  : image === undefined
  ? "EFFECT_SANDBOX_K8S_IMAGE names no image the cluster can pull"
  : undefined

const namespace = process.env["EFFECT_SANDBOX_K8S_NAMESPACE"]
const title = why === undefined
  ? "kubernetes (live cluster)"
  : `kubernetes (live cluster) (skipped: ${why}; see docs/runtimes/kubernetes.md)`
;(why === undefined ? describe : describe.skip)(title, () => {
  runConformance({
    name: "KubernetesRuntime (live cluster)",
    layer: ({ noChangeTimeoutSeconds }) =>
      KubernetesRuntime.layer({
        ...(image === undefined ? {} : { image }),
        ...(namespace === undefined ? {} : { namespace }),
        noChangeTimeoutSeconds,
        ipython: true,
        browser: true,
        deleteWorkspace: true
      }),
    containsProcesses: true,
    capabilities: { pause: true, ipython: true, browser: true, mcp: false }
  })
  // Pause, attach, the reaper, a dying server and release, on the cluster.
  hostedLifecycleConformance(kubernetesLifecycle(() => ({
    kubeconfigPath: kubeconfig,
    ...(image === undefined ? {} : { image }),
    ...(namespace === undefined ? {} : { namespace })
  })))
})
