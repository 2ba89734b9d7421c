/**
 * The owner processes the owner-kill group SIGKILLs (owner.ts), the base image their
 * DockerRuntimes build on, and the row for how long what they left took to go.
 */
import { spawn, spawnSync } from "node:child_process"
import { join } from "node:path"
import type { Row } from "./rows.ts"

/** The reap time the issue asks for. */
export const REAP_TARGET_S = 60

/** A row for a reap: the seconds it took, or the seconds waited when something was still there. */
export const reapRow = (name: string, waitedMs: number | null, boundMs: number, left: ReadonlyArray<string>): Row => {
  if (left.length > 0) console.log(`  ${name}: still there after ${(boundMs / 1000).toFixed(0)} s: ${left.join(", ")}`)
  return {
    name,
    value: Math.round((waitedMs ?? boundMs) / 100) / 10,
    unit: "s",
    target: `<= ${REAP_TARGET_S}`,
    pass: waitedMs !== null && waitedMs <= REAP_TARGET_S * 1000
  }
}

/** What owner.ts prints before the JSON of its runtime. */
const OWNER_PREFIX = "chaos-owner "

/** Start `owner.ts` and read its first line (the runtime it started). */
export const startOwner = (args: ReadonlyArray<string>) =>
  new Promise<{ readonly pid: number; readonly id: string; readonly workspace: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [join(import.meta.dirname, "owner.ts"), ...args], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`owner ${args[0]} did not start within 180 s`))
    }, 180_000)
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString()
      // Its logs may come first: the runtime is the line with the prefix.
      const line = out.split("\n").find((l) => l.startsWith(OWNER_PREFIX))
      if (line === undefined) return
      clearTimeout(timer)
      try {
        resolve({ pid: child.pid!, ...JSON.parse(line.slice(OWNER_PREFIX.length)) })
      } catch (error) {
        child.kill("SIGKILL")
        reject(error)
      }
    })
    child.on("exit", (code) => reject(new Error(`owner ${args[0]} exited (${code}) before starting: ${out}`)))
  })

/** The Debian base image tag (built and cached by scripts/base-image.sh, as the Docker tests find it). */
export const baseImage = (): string => {
  const script = join(import.meta.dirname, "..", "..", "scripts", "base-image.sh")
  const result = spawnSync(script, ["base"], { encoding: "utf8" })
  if (result.status !== 0) throw new Error(`Cannot build the base image: ${result.stderr}`)
  return result.stdout.trim().split("\n").at(-1)!
}
