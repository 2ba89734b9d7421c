/**
 * Group 8, processes: background processes (`Runtime.spawn`) on LocalRuntime (client,
 * server and process manager, as in production). An agent spawns more than the session
 * may hold, all at once, each forking daemons that try to escape (`setsid`, `nohup`,
 * disowned jobs); then the session is released while every handle's scope is still
 * open. None may be accepted past the limit, and none may outlive the session.
 */
import { Effect, Exit, ManagedRuntime, Scope } from "effect"
import { execFileSync } from "node:child_process"
import { Runtime } from "../../src/index.ts"
import { LocalRuntime } from "../../src/local.ts"
import { atLeast, atMost, type GroupContext, type Row, waitFor } from "./rows.ts"

/** The session's limit, `EFFECT_SANDBOX_MAX_PROCESSES`' default. */
const LIMIT = 16

/** Host processes whose command line contains `fragment` (pgrep exits 1, printing 0, when none). */
const count = (fragment: string) => {
  try {
    return Number(execFileSync("pgrep", ["-fc", fragment], { encoding: "utf8" }).trim())
  } catch {
    return 0
  }
}

export const processRows = async ({ budget, quick }: GroupContext): Promise<ReadonlyArray<Row>> => {
  const attempts = quick ? 2 * LIMIT : 8 * LIMIT
  let rounds = 0
  let overLimit = 0
  let survivors = 0
  let running = 0
  for (; rounds < (quick ? 1 : 3) && !budget.over; rounds++) {
    const seconds = `${900 + rounds}.${process.pid}`
    // Each process forks three that try to leave: their own session, nohup, a disowned job.
    const command = `setsid sleep ${seconds} >/dev/null 2>&1 < /dev/null & ` +
      `nohup sleep ${seconds} >/dev/null 2>&1 & sleep ${seconds} & disown; exec sleep ${seconds}`
    const runtime = ManagedRuntime.make(LocalRuntime.layer())
    const handles = await runtime.runPromise(Scope.make())
    try {
      const rt = await runtime.runPromise(Runtime)
      const results = await runtime.runPromise(
        Effect.all(
          Array.from({ length: attempts }, () => Effect.exit(Scope.provide(rt.spawn(command), handles))),
          { concurrency: 32 }
        )
      )
      overLimit += Math.max(0, results.filter(Exit.isSuccess).length - LIMIT)
      await waitFor(() => count(`sleep ${seconds}`) >= 4 * LIMIT, 10_000)
      running += count(`sleep ${seconds}`)
    } finally {
      // The session goes while every handle's scope is still open.
      await runtime.dispose()
    }
    await waitFor(() => count(`sleep ${seconds}`) === 0, 5_000)
    survivors += count(`sleep ${seconds}`)
    await Effect.runPromise(Scope.close(handles, Exit.void))
  }
  return [
    // Coverage: each accepted process and its three children were running when the session went.
    atLeast(
      `processes: background processes running at release (of ${rounds} sessions)`,
      running,
      "processes",
      rounds * 4 * LIMIT
    ),
    atMost(
      `processes: spawns accepted past the session's limit of ${LIMIT} (of ${rounds * attempts})`,
      overLimit,
      "processes",
      0
    ),
    atMost(
      `processes: background processes and their escaping children alive 5 s after their session (of ${rounds} sessions)`,
      survivors,
      "processes",
      0
    )
  ]
}
