/**
 * Session cgroups (this host must let us create them: root with a writable pids
 * hierarchy, as CI), and the process-table fallback where there are none.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn, spawnSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { cgroupsAvailable } from "../../../src/executor/shell/cgroup.ts"
import { processLimitSuffix } from "../../../src/executor/shell/messages.ts"
import { killSession } from "../../../src/executor/shell/processTree.ts"
import { CmdRunAction } from "../../../src/schema/Action.ts"
import { required } from "../../conformance/requirement.ts"
import { withBashSession } from "./withBashSession.ts"

const cgroups = required(cgroupsAvailable(), {
  ci: "CI must be able to create cgroups (root, writable /sys/fs/cgroup).",
  skipped: "Skipping the cgroup tests: this process cannot create cgroups (needs root and a writable /sys/fs/cgroup)."
})

const alive = (pid: number) =>
  existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"))

/** Directories of a runtime's cgroups, in every hierarchy that has them. */
const cgroupDirs = (runtimeId: string) =>
  ["/sys/fs/cgroup/pids", "/sys/fs/cgroup/unified", "/sys/fs/cgroup"].flatMap((root) => {
    const dir = join(root, "effect-sandbox", runtimeId)
    return existsSync(dir) ? [dir] : []
  })

const withSession = <A, E>(
  runtimeId: string,
  pidsLimit: number,
  body: (
    run: (command: string, timeout?: number) => Effect.Effect<{ content: string; suffix: string }, unknown>
  ) => Effect.Effect<A, E>
) =>
  withBashSession(
    { noChangeTimeoutSeconds: 30, marker: runtimeId, pidsLimit },
    (session) =>
      body((command, timeout) =>
        Effect.map(
          session.execute(
            new CmdRunAction({
              command,
              blocking: timeout !== undefined,
              ...(timeout === undefined ? {} : { timeout })
            })
          ),
          (obs) => ({ content: obs.content, suffix: obs.metadata.suffix })
        )
      )
  )

describe("session cgroups", () => {
  it.live.skipIf(!cgroups)(
    "puts the shell in the runtime's cgroup with its pids limit, and removes it on release",
    () =>
      Effect.gen(function*() {
        const runtimeId = `test-${process.pid}-limit`
        yield* withSession(runtimeId, 77, (run) =>
          Effect.gen(function*() {
            const own = yield* run("cat /proc/self/cgroup")
            assert.include(own.content, `/effect-sandbox/${runtimeId}/`)
            const [pidsDir] = cgroupDirs(runtimeId).filter((d) => d.includes("/pids/"))
            assert.isDefined(pidsDir)
            assert.strictEqual(readFileSync(join(pidsDir!, "pids.max"), "utf8").trim(), "77")
          }))
        assert.deepStrictEqual(cgroupDirs(runtimeId), [])
      })
  )

  it.live.skipIf(!cgroups)(
    "a fork bomb stops at the limit, is reported, and killing the session's processes recovers",
    () =>
      Effect.gen(function*() {
        const runtimeId = `test-${process.pid}-bomb`
        const limit = 40
        const sleep = `sleep 61.${process.pid}`
        yield* withSession(runtimeId, limit, (run) =>
          Effect.gen(function*() {
            // Refuse to run the bomb unless this very shell is limited (never unbounded on a shared host).
            const max = yield* run(
              "cat /sys/fs/cgroup/pids$(grep ':pids:' /proc/self/cgroup | cut -d: -f3)/../pids.max"
            )
            assert.strictEqual(max.content, String(limit))
            // Bounded: at most 200 processes even without a limit. At the limit bash keeps retrying its
            // fork, so the command hangs until its hard timeout, as a real bomb wedges a shell.
            const bomb = yield* run(
              `for i in $(seq 200); do ${sleep} & done 2>/dev/null; echo spawned`,
              5
            )
            assert.include(bomb.suffix, processLimitSuffix(limit))
            const after = yield* run("echo ok; jobs | wc -l")
            assert.strictEqual(after.content, "ok\n0")
            assert.strictEqual(after.suffix, "\n[The command completed with exit code 0.]")
          }))
        assert.deepStrictEqual(cgroupDirs(runtimeId), [])
        assert.deepStrictEqual(spawnSync("pgrep", ["-f", sleep], { encoding: "utf8" }).stdout.trim(), "")
      })
  )
})

describe("process tree fallback", () => {
  it("kills a descendant that left the session and cleaned its environment", () => {
    const script = `env -i python3 -c 'import os, time; os.setsid(); time.sleep(300)' & echo $!; wait`
    const shell = spawn("bash", ["-c", script], { detached: true, stdio: ["ignore", "pipe", "ignore"] })
    return new Promise<void>((resolve, reject) => {
      shell.stdout.setEncoding("utf8").once("data", (line: string) => {
        const child = Number(line.trim())
        // Wait until python has run setsid (its own session), then kill the shell's tree.
        const poll = setInterval(() => {
          const session = Number(readFileSync(`/proc/${child}/stat`, "utf8").split(") ")[1]!.split(" ")[3])
          if (session !== child) return
          clearInterval(poll)
          killSession(shell.pid!, "no-such-marker")
          setTimeout(() => {
            try {
              assert.isFalse(alive(child))
              resolve()
            } catch (error) {
              process.kill(child, "SIGKILL")
              reject(error)
            }
          }, 100)
        }, 20)
      })
    })
  })
})
