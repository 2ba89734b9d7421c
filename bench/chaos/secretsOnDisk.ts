/**
 * Part of group 7, secrets: a `Redacted` variable added to a DockerRuntime sandbox, used by a
 * command (so the shell sourced it), then looked for in the container's writable layer on the
 * host (overlay2's upper directory, what `docker commit`/`export` and the engine's storage keep):
 * no file there may hold it. The env file the shells source must be on the memory-backed
 * `/dev/shm` instead (executor/envDir.ts). In the same sandbox, its session key: the container gets
 * only the key's SHA-256 (engines/docker/sessionKey.ts), so no process's environment or argv (PID
 * 1's included) and no file of the writable layer may hold the key itself, while the digest is found
 * where it is given (the scan finds what is there).
 */
import { Effect, ManagedRuntime, Redacted } from "effect"
import { spawnSync } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import { DockerRuntime } from "../../src/docker.ts"
import { Runtime } from "../../src/index.ts"
import { baseImage } from "./ownerProcess.ts"
import { atLeast, atMost, type Row } from "./rows.ts"

const docker = (...args: Array<string>) => spawnSync("docker", args, { encoding: "utf8" })

/** Files under `dir` (on this host) holding `needle`: `grep -rlF`, reading the needle from stdin so no argv holds it. */
const filesHolding = (dir: string, needle: string) => {
  const found = spawnSync("grep", ["-rlsF", "-f", "-", dir], { input: `${needle}\n`, encoding: "utf8" })
  // 0: found, 1: none; anything else is a grep that could not look, which must not read as "none".
  if (found.status !== 0 && found.status !== 1) throw new Error(`grep in ${dir} failed: ${found.stderr}`)
  return found.stdout.split("\n").filter((line) => line !== "")
}

/**
 * How many of the container's processes hold `needle` in their environment or argv, PID 1's
 * included: read from this host's `/proc` (the suite runs as root, as CI does), since root inside
 * the container, without `CAP_SYS_PTRACE`, may not read another process's environment.
 */
const processesHolding = (container: string, needle: string) => {
  const pids = docker("top", container, "-eo", "pid").stdout.split("\n").slice(1).map((l) => l.trim())
    .filter((l) => l !== "")
  if (pids.length === 0) throw new Error(`docker top ${container} listed no process`)
  return pids.filter((pid) =>
    ["environ", "cmdline"].some((file) => readFileSync(`/proc/${pid}/${file}`).includes(needle))
  ).length
}

export const secretsOnDiskRows = async (): Promise<ReadonlyArray<Row>> => {
  const secret = randomBytes(16).toString("hex")
  const runtime = ManagedRuntime.make(
    DockerRuntime.layer({ baseImage: baseImage(), sessionId: `chaos-disk-${randomBytes(5).toString("hex")}` })
  )
  try {
    const rt = await runtime.runPromise(Runtime)
    await runtime.runPromise(rt.addEnvVars({ CHAOS_DISK_SECRET: Redacted.make(secret) }))
    const used = await runtime.runPromise(
      rt.runCommand("test -n \"$CHAOS_DISK_SECRET\" && echo set").pipe(Effect.map((o) => o.content.trim()))
    )
    const container = `effect-sandbox-${rt.info.id}`
    const upper = docker("inspect", "-f", "{{.GraphDriver.Data.UpperDir}}", container).stdout.trim()
    if (!upper.startsWith("/")) throw new Error(`no overlay2 upper directory for ${container}: "${upper}"`)
    const inLayer = filesHolding(upper, secret)
    const inMemory = docker("exec", container, "sh", "-c", "ls /dev/shm/effect-sandbox-env-*/env.sh").stdout.trim()
    const key = docker("inspect", "-f", "{{index .Config.Labels \"effect-sandbox.session-key\"}}", container).stdout
      .trim()
    if (key.length < 16) throw new Error(`cannot read ${container}'s session key from its label`)
    const digest = `EFFECT_SANDBOX_SESSION_API_KEY_SHA256=${createHash("sha256").update(key).digest("hex")}`
    const env = docker("inspect", "-f", "{{json .Config.Env}}", container).stdout
    const digestInProcesses = processesHolding(container, digest)
    const keyInProcesses = processesHolding(container, key)
    const keyInLayer = filesHolding(upper, key)
    return [
      atLeast("secrets: Docker added secret visible to a command", used === "set" ? 1 : 0, "commands", 1),
      atMost(`secrets: Docker writable-layer files holding an added secret`, inLayer.length, "files", 0),
      atLeast("secrets: Docker env file on /dev/shm (memory)", inMemory === "" ? 0 : 1, "files", 1),
      atLeast(
        "secrets: Docker container environment with the session key's digest",
        env.includes(digest) ? 1 : 0,
        "entries",
        1
      ),
      // The scan below finds what is there: PID 1 and the server hold the digest.
      atLeast("secrets: Docker processes holding the session key's digest", digestInProcesses, "processes", 2),
      atMost(
        "secrets: Docker session key in the container's processes (environments, argv) or writable layer",
        (env.includes(key) ? 1 : 0) + keyInProcesses + keyInLayer.length,
        "places",
        0
      )
    ]
  } finally {
    await runtime.dispose()
  }
}
