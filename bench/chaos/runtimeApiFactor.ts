/**
 * Part of group runtime-api: the largest `resource_factor` (16) must not ask the engine for more
 * memory or CPUs than it has; a limit above the host's memory limits nothing, and a factor of 16
 * asked 64 GiB of a 24 GiB host.
 */
import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { call, type Started } from "../../scripts/runtimeApiProcess.ts"
import { atMost, type Row } from "./rows.ts"

const docker = (...args: Array<string>) => spawnSync("docker", args, { encoding: "utf8" }).stdout.trim()

export const resourceFactorRows = async (
  base: string,
  key: string,
  containerPrefix: string
): Promise<ReadonlyArray<Row>> => {
  const sessionId = `chaos-factor-${randomBytes(5).toString("hex")}`
  const answer = await call(base, "POST", "/start", {
    key,
    body: { session_id: sessionId, resource_factor: 16, command: ["sleep", "300"] }
  })
  if (answer.status !== 200) {
    throw new Error(`/start with resource_factor 16: ${answer.status} ${JSON.stringify(answer.body)}`)
  }
  try {
    const [memTotal, cpus] = docker("info", "--format", "{{.MemTotal}} {{.NCPU}}").split(" ").map(Number)
    const [memory, nanoCpus] = docker(
      "inspect",
      "--format",
      "{{.HostConfig.Memory}} {{.HostConfig.NanoCpus}}",
      `${containerPrefix}-${sessionId}`
    ).split(" ").map(Number)
    return [
      atMost(
        "runtime-api: resource_factor 16's memory limit over the engine's memory",
        Math.max(0, memory! - memTotal!),
        "bytes",
        0
      ),
      atMost(
        "runtime-api: resource_factor 16's CPUs over the engine's",
        Math.max(0, nanoCpus! / 1e9 - cpus!),
        "cpus",
        0
      )
    ]
  } finally {
    await call(base, "POST", "/stop", { key, body: { runtime_id: (answer.body as unknown as Started).runtime_id } })
  }
}
