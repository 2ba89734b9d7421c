/**
 * Waiting for a remote runtime's pod (spec §14 `_wait_until_alive`): `GET /runtime/{id}` until its
 * `pod_status` is `ready`, failing at once, with OpenHands' texts, on a pod that will not get
 * there. The action server's own `/alive` wait follows, in the builder.
 */
import { Duration, Effect, type Schedule } from "effect"
import { RuntimeStartError } from "../../schema/errors.ts"
import type { RuntimeApi } from "./api.ts"

/** Statuses of a pod on its way (OpenHands also reads a missing pod as "not yet"). */
const STARTING = new Set(["not found", "pending", "running"])

/** The pod is not ready yet: poll again. */
class NotReady {
  readonly _tag = "NotReady"
}

/** OpenHands' text for a pod that will not become ready, or undefined while it still may. */
export const podFailure = (podStatus: string): string | undefined => {
  const status = podStatus.toLowerCase()
  if (status === "failed" || status === "unknown") {
    return `Runtime is unavailable (status: ${status}). Please try again.`
  }
  if (status === "crashloopbackoff") {
    return "Runtime crashed and is being restarted, potentially due to memory usage. Please try again."
  }
  return undefined
}

/** What the API says of a pod that will not become ready, beside its status. */
interface PodEnd {
  /** `restart_reasons`: the API's own words (`exited with code 1`, `OOMKilled`, Kubernetes' `exit code 1 (Error)`). */
  readonly restartReasons?: ReadonlyArray<string> | null | undefined
  /** `last_output`: the server's last lines, where the API tells them (ours does). */
  readonly lastOutput?: string | null | undefined
}

/** An exit code in a restart reason, in Docker's words (`exited with code 1`) or Kubernetes' (`exit code 1`). */
const EXIT_CODE = /\bexit(?:ed with)? code (-?\d+)\b/

/**
 * A pod that will not become ready, as a start error: OpenHands' text, then what the API said of
 * it. A reason that names an exit code, or a crash loop, is the server exiting (`server-exited`,
 * with the code and its last output when told): the same data every other runtime gives.
 */
const failedPod = (status: string, openHandsText: string, end: PodEnd) => {
  const reasons = (end.restartReasons ?? []).filter((reason) => reason.trim() !== "")
  const output = (end.lastOutput ?? "").trim()
  const message = openHandsText +
    (reasons.length === 0 ? "" : ` Restart reasons: ${reasons.join("; ")}.`) +
    (output === "" ? "" : ` Its last output:\n${output}`)
  const code = reasons.map((reason) => EXIT_CODE.exec(reason)?.[1]).find((found) => found !== undefined)
  if (code === undefined && status !== "crashloopbackoff") return new RuntimeStartError({ message, reason: "other" })
  return new RuntimeStartError({
    message,
    reason: "server-exited",
    ...(code === undefined ? {} : { exitCode: Number(code) }),
    ...(output === "" ? {} : { output })
  })
}

/** One look at the pod: ready, not yet (`NotReady`), or never (`RuntimeStartError`). */
const checkPod = (api: RuntimeApi, runtimeId: string) =>
  api.runtime(runtimeId).pipe(
    Effect.flatMap((answer): Effect.Effect<void, NotReady | RuntimeStartError> => {
      if (answer.runtime_id !== runtimeId) {
        return Effect.fail(
          new RuntimeStartError({
            message: `The runtime API answered GET /runtime/${runtimeId} about another runtime (${answer.runtime_id})`
          })
        )
      }
      const status = answer.pod_status.toLowerCase()
      if (status === "ready") return Effect.void
      const failure = podFailure(status)
      if (failure !== undefined) {
        return Effect.fail(failedPod(status, failure, {
          restartReasons: answer.restart_reasons,
          lastOutput: answer.last_output
        }))
      }
      if (STARTING.has(status)) return Effect.fail(new NotReady())
      return Effect.logWarning(`Unknown pod status "${answer.pod_status}" of runtime ${runtimeId}; still waiting`).pipe(
        Effect.andThen(Effect.fail(new NotReady()))
      )
    })
  )

/** Poll the pod with `schedule` until it is ready, for at most `timeout`. */
export const waitForPod = Effect.fn("RemoteRuntime.waitForPod")(function*(
  api: RuntimeApi,
  runtimeId: string,
  timeout: Duration.Duration,
  schedule: Schedule.Schedule<unknown>
) {
  yield* checkPod(api, runtimeId).pipe(
    Effect.retry({ schedule, while: (e) => e instanceof NotReady }),
    Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.fail(new NotReady()) }),
    Effect.catch((e) =>
      e instanceof NotReady
        ? Effect.fail(
          new RuntimeStartError({
            reason: "alive-timeout",
            message: `Runtime ${runtimeId} was not ready within ${Duration.format(timeout)} (its pod status stayed ` +
              "pending); raise aliveTimeout or check the runtime API's capacity."
          })
        )
        : Effect.fail(e)
    )
  )
})
