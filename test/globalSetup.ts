/**
 * Suite-wide leak check. Every process the tests start (shells, servers, their
 * children) inherits `EFFECT_SANDBOX_TEST_RUN`; after the last test, none may be
 * alive. A leaked process fails the whole run, whichever test leaked it.
 */
import { randomUUID } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"

const VARIABLE = "EFFECT_SANDBOX_TEST_RUN"

const taggedProcesses = (run: string): Array<string> =>
  readdirSync("/proc").filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid).flatMap((pid) => {
    try {
      if (!readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(`${VARIABLE}=${run}`)) return []
      return [`${pid} ${readFileSync(`/proc/${pid}/cmdline`, "latin1").replaceAll("\0", " ").trim()}`]
    } catch {
      return []
    }
  })

export default function setup() {
  const run = randomUUID()
  process.env[VARIABLE] = run
  return async () => {
    // Test workers exit just before teardown; give their last finalizers a moment.
    for (let attempt = 0; attempt < 50 && taggedProcesses(run).some((p) => !/vitest/.test(p)); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const leaked = taggedProcesses(run).filter((p) => !/vitest/.test(p))
    if (leaked.length > 0) throw new Error(`Processes left running by the tests:\n${leaked.join("\n")}`)
  }
}
