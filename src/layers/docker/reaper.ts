/**
 * The reaper: containers whose owner process is gone (SIGKILL, OOM, a crash
 * before finalizers ran) are removed. It runs when a DockerRuntime starts and
 * then every 30 s while that runtime lives, so a leak lasts at most until the
 * next runtime starts on the engine, and under a minute while any owner lives.
 * Containers released with `keepRuntimeAlive` are left alone.
 */
import { Effect, Schedule } from "effect"
import { removeWithWorkspace } from "./container.ts"
import { DockerEngine } from "./engine.ts"
import { LABEL, ownerIsGone } from "./labels.ts"

export const REAP_INTERVAL = "30 seconds"

/** Remove every orphaned container on the engine; returns how many were removed. */
export const reapOrphans: Effect.Effect<number, never, DockerEngine> = Effect.gen(function*() {
  const { docker } = yield* DockerEngine
  const containers = yield* Effect.promise(() =>
    docker.listContainers({ all: true, filters: { label: [`${LABEL.managed}=true`] } }).catch(() => [])
  )
  const orphans = containers.filter((c) => c.Labels[LABEL.keepAlive] !== "true" && ownerIsGone(c.Labels))
  yield* Effect.forEach(
    orphans,
    (c) =>
      removeWithWorkspace(docker.getContainer(c.Id), c.Labels).pipe(
        Effect.tap(() => Effect.logInfo(`reaped container ${c.Names[0] ?? c.Id} of a dead owner`))
      ),
    { concurrency: 4, discard: true }
  )
  return orphans.length
})

/** Reap now, then keep reaping in the background for as long as the scope lives. */
export const startReaper = Effect.gen(function*() {
  yield* reapOrphans
  yield* reapOrphans.pipe(Effect.repeat(Schedule.spaced(REAP_INTERVAL)), Effect.forkScoped)
})
