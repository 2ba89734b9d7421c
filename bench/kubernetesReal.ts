/**
 * Kubernetes rows on the real single-node cluster of scripts/kubernetes/ (when `cluster.sh up` has
 * run; otherwise skipped, saying so): KubernetesRuntime in pod mode from start to READY, through a
 * port-forward and direct to the pod IP, as the test namespace's service account (the docs' Role,
 * under its ResourceQuota and LimitRange), beside the floor measured in the same run: a bare pod of
 * the same image, from create to the first HTTP 200 at its pod IP. What the rows show is our
 * overhead on top of a pod start: the PVC, Secret and Service, the watch, the readiness probe's
 * period, the port-forward and the server's own start.
 */
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node"
import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { join } from "node:path"
import { KubernetesRuntime } from "../src/kubernetes.ts"
import { timeStarts } from "./startup.ts"
import { type Sample, timeRuns } from "./stats.ts"

type Record = (name: string, sample: Sample, baseline: string, base: Sample, note?: string) => void

const scripts = join(import.meta.dirname, "..", "scripts", "kubernetes")

/** `cluster.sh env` as variables, or undefined when no cluster is up. */
const clusterEnv = (): Readonly<{ [name: string]: string }> | undefined => {
  const result = spawnSync(join(scripts, "cluster.sh"), ["env"], { encoding: "utf8" })
  if (result.status !== 0) return undefined
  return Object.fromEntries(result.stdout.trim().split("\n").map((line) => line.split(/=(.*)/s).slice(0, 2)))
}

/** A bare pod of `image` (a node HTTP server on 8000): create to the first 200 at its IP, then deleted. */
const barePod = async (core: CoreV1Api, namespace: string, image: string): Promise<number> => {
  const name = `bench-bare-${randomBytes(4).toString("hex")}`
  const started = performance.now()
  await core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name },
      spec: {
        terminationGracePeriodSeconds: 0,
        containers: [{
          name: "server",
          image,
          command: [
            "/opt/effect-sandbox/bin/node",
            "-e",
            "require('http').createServer((q,s)=>s.end('ok')).listen(8000)"
          ],
          resources: { requests: { cpu: "100m", memory: "128Mi" } }
        }]
      }
    }
  })
  try {
    while (true) {
      const ip = (await core.readNamespacedPod({ name, namespace })).status?.podIP
      if (ip !== undefined) {
        try {
          const response = await fetch(`http://${ip}:8000/`, { signal: AbortSignal.timeout(500) })
          if (response.ok) return performance.now() - started
        } catch {
          // the server is not listening yet
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  } finally {
    await core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 })
    while ((await core.listNamespacedPod({ namespace, fieldSelector: `metadata.name=${name}` })).items.length > 0) {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}

export const kubernetesRealRows = async (record: Record) => {
  const env = clusterEnv()
  if (env === undefined) {
    console.log("(Kubernetes real-cluster rows skipped: no cluster is up; scripts/kubernetes/cluster.sh up)")
    return
  }
  const image = spawnSync(process.execPath, [join(scripts, "runtime-image.ts")], { encoding: "utf8" }).stdout.trim()
  if (spawnSync(join(scripts, "cluster.sh"), ["import", image], { stdio: "inherit" }).status !== 0) {
    throw new Error(`cluster.sh import ${image} failed`)
  }
  const kubeConfig = new KubeConfig()
  kubeConfig.loadFromFile(env["KUBECONFIG"]!)
  const namespace = env["EFFECT_SANDBOX_K8S_NAMESPACE"]!
  const core = kubeConfig.makeApiClient(CoreV1Api)
  const floor = await timeRuns(10, 1, () => barePod(core, namespace, image), (ms) => ms)
  for (const connect of ["portForward", "direct"] as const) {
    const ready = await timeStarts(10, () =>
      KubernetesRuntime.layer({
        kubeConfig,
        namespace,
        image,
        connect,
        resources: { requests: { cpu: "100m", memory: "512Mi" } },
        deleteWorkspace: true
      }))
    record(
      `KubernetesRuntime: start to READY (real 1.20 cluster, ${connect === "direct" ? "pod IP" : "port-forward"})`,
      ready,
      "bare pod to first HTTP 200 at its IP",
      floor
    )
  }
}
