/**
 * Kubernetes row of `npm run bench`: KubernetesRuntime from start to READY against the stand-in
 * API server (pods as Docker containers, reached through a port-forward), beside the floor of the
 * same machine measured in the same run: a bare container from create to its first HTTP 200.
 * A second row starts the session as an agent-sandbox Sandbox instead of a bare pod. Then the rows
 * of the real single-node cluster (kubernetesReal.ts), when one is up.
 * What the rows show is our overhead on top of a container start: the objects made through the
 * API, the watch, the port-forward and the server's own start.
 */
import { KubeConfig } from "@kubernetes/client-node"
import { spawnSync } from "node:child_process"
import { KubernetesRuntime } from "../src/kubernetes.ts"
import { startStandIn } from "../test/kubernetes/standin/server.ts"
import { bareContainer, benchBaseImage } from "./docker.ts"
import { kubernetesRealRows } from "./kubernetesReal.ts"
import { timeStarts } from "./startup.ts"
import { type Sample, skipped, timeRuns } from "./stats.ts"

type Record = (name: string, sample: Sample, baseline: string, base: Sample, note?: string) => void

export const kubernetesRows = async (record: Record) => {
  if (spawnSync("docker", ["info"], { stdio: "ignore" }).status !== 0) {
    skipped("Kubernetes rows skipped: the stand-in runs pods on Docker and no engine answers `docker info`")
    return
  }
  const base = benchBaseImage()
  const cluster = await startStandIn()
  try {
    const kubeConfig = new KubeConfig()
    kubeConfig.loadFromFile(cluster.kubeconfigPath)
    const layer = (mode: "pod" | "agentSandbox" = "pod") => () =>
      KubernetesRuntime.layer({ kubeConfig, baseImage: base, deleteWorkspace: true, mode })
    // One start builds (or finds) the runtime image; the rows measure the cached case.
    await timeStarts(1, layer())
    const image = spawnSync("docker", ["images", "-q", "--filter", "reference=effect-sandbox-runtime"], {
      encoding: "utf8"
    }).stdout.trim().split("\n")[0]!
    const floor = await timeRuns(10, 1, () => bareContainer(image), (ms) => ms)
    const ready = await timeStarts(10, layer())
    record(
      "KubernetesRuntime: start to READY (stand-in, port-forward)",
      ready,
      "bare container to first HTTP 200",
      floor
    )
    // agentSandbox mode: the same pod behind a Sandbox (one more object, its controller, its watch).
    const sandboxed = await timeStarts(10, layer("agentSandbox"))
    record(
      "KubernetesRuntime: start to READY (stand-in, agentSandbox mode, port-forward)",
      sandboxed,
      "bare container to first HTTP 200",
      floor
    )
  } finally {
    await cluster.close()
  }
  await kubernetesRealRows(record)
}
