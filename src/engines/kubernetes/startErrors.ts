/**
 * Why a pod will not become ready, read from its status as the kubelet and scheduler write it:
 * an image it cannot pull (ErrImagePull, ImagePullBackOff, InvalidImageName), a container that
 * will not start (CreateContainerConfigError, CrashLoopBackOff with its last exit), no node that
 * takes it (Unschedulable, with the scheduler's text), an out-of-memory kill (OOMKilled), or a
 * pod that ended. No node and a failed pull may pass by themselves (`passing`): a start waits
 * them out until its deadline. The start error's message names that reason, then the pod's events and last
 * log lines, so the user sees what `kubectl describe pod` would show.
 */
import type { CoreV1Event, V1ContainerStateTerminated, V1Pod } from "@kubernetes/client-node"
import { Effect } from "effect"
import type { Disconnect } from "../../services/Provisioner.ts"
import { quotedLines } from "../logLines.ts"
import { type Kube, kubeCallOrMissing } from "./client.ts"

/** Waiting reasons a container does not leave by itself. */
const STUCK = new Set([
  "ErrImagePull",
  "ImagePullBackOff",
  "InvalidImageName",
  "ErrImageNeverPull",
  "CreateContainerConfigError",
  "CreateContainerError",
  "RunContainerError",
  "CrashLoopBackOff"
])

const terminatedText = (t: V1ContainerStateTerminated): string =>
  `exit code ${t.exitCode}${t.reason === undefined ? "" : ` (${t.reason})`}`

/** The container's termination by an out-of-memory kill, now or on its last run. */
export const oomKill = (pod: V1Pod): V1ContainerStateTerminated | undefined => {
  const status = pod.status?.containerStatuses?.[0]
  return [status?.state?.terminated, status?.lastState?.terminated].find((t) => t?.reason === "OOMKilled")
}

export const isReady = (pod: V1Pod): boolean =>
  pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true

/** Has the pod stopped for good (restartPolicy Never: a dead container ends it)? */
export const hasEnded = (pod: V1Pod): boolean =>
  pod.status?.phase === "Failed" || pod.status?.phase === "Succeeded" ||
  pod.status?.containerStatuses?.[0]?.state?.terminated !== undefined

/**
 * Why a pod cannot become ready, as data: an image the kubelet cannot pull, no node that takes it,
 * a container that exited (its exit code: a crash at start, an out-of-memory kill), or something
 * else (a config error, a pod that ended). `text` is `Reason: detail`.
 */
export interface PodTrouble {
  readonly kind: "image-missing" | "unschedulable" | "exited" | "other"
  readonly text: string
  readonly exitCode?: number
  /**
   * It may pass by itself, so a start waits it out until its deadline: no node fits the pod yet
   * (a cluster-autoscaler, Karpenter or Autopilot adds one in a minute or two; an immediate PVC
   * binds), or a pull failed (a registry's blip: the kubelet pulls again after its back-off).
   */
  readonly passing?: true
}

/** Pull failures the kubelet retries by itself; InvalidImageName and ErrImageNeverPull it never does. */
const PULL_RETRIED = new Set(["ErrImagePull", "ImagePullBackOff"])

const IMAGE_REASONS = new Set(["ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"])

/** Why the pod cannot become ready, or undefined while it may still. */
export const podTroubleOf = (pod: V1Pod): PodTrouble | undefined => {
  const limit = pod.spec?.containers[0]?.resources?.limits?.["memory"]
  const oom = oomKill(pod)
  if (oom !== undefined) {
    return {
      kind: "exited",
      exitCode: oom.exitCode,
      text: `OOMKilled: the container exceeded its memory limit${limit === undefined ? "" : ` of ${limit}`} (${
        terminatedText(oom)
      })`
    }
  }
  const unschedulable = pod.status?.conditions?.find((c) => c.type === "PodScheduled" && c.reason === "Unschedulable")
  if (unschedulable !== undefined) {
    return {
      kind: "unschedulable",
      text: `Unschedulable: ${unschedulable.message ?? "no node can run the pod"}`,
      passing: true
    }
  }
  const container = pod.status?.containerStatuses?.[0]
  const waiting = container?.state?.waiting
  if (waiting?.reason !== undefined && STUCK.has(waiting.reason)) {
    const last = container?.lastState?.terminated
    const text = `${waiting.reason}: ${waiting.message ?? ""}${
      last === undefined ? "" : ` (last run: ${terminatedText(last)})`
    }`
    if (IMAGE_REASONS.has(waiting.reason)) {
      return PULL_RETRIED.has(waiting.reason)
        ? { kind: "image-missing", text, passing: true }
        : { kind: "image-missing", text }
    }
    return last === undefined ? { kind: "other", text } : { kind: "exited", exitCode: last.exitCode, text }
  }
  const terminated = container?.state?.terminated
  if (terminated !== undefined) {
    return {
      kind: "exited",
      exitCode: terminated.exitCode,
      text: `the container exited: ${terminatedText(terminated)}`
    }
  }
  if (pod.status?.phase === "Failed" || pod.status?.phase === "Succeeded") {
    return {
      kind: "other",
      text: `the pod ${pod.status.phase}${pod.status.reason === undefined ? "" : `: ${pod.status.reason}`}${
        pod.status.message === undefined ? "" : ` (${pod.status.message})`
      }`
    }
  }
  return undefined
}

/** Why the pod cannot become ready (`Reason: detail`), or undefined while it may still. */
export const podTrouble = (pod: V1Pod): string | undefined => podTroubleOf(pod)?.text

const eventLine = (e: CoreV1Event) => `  ${e.type ?? "Normal"} ${e.reason ?? ""}: ${e.message ?? ""}`

/**
 * The last 20 lines the pod's container printed, each cut as Docker's are (logLines.ts; with
 * `previous`, its run before this one: a crash loop's container waiting to start again has printed
 * nothing yet); "" when the cluster has none to give.
 */
export const podLogTail = (kube: Kube, name: string, previous = false) =>
  kubeCallOrMissing(
    `read the log of pod ${name}`,
    () => kube.core.readNamespacedPodLog({ name, namespace: kube.namespace, tailLines: 20, previous })
  ).pipe(Effect.map((log) => quotedLines(log ?? "")), Effect.orElseSucceed(() => ""))

/** The pod's events (`kubectl describe`'s list) and its last log lines, for a start error. */
export const podReport = Effect.fn("podReport")(function*(kube: Kube, name: string) {
  const events = yield* kubeCallOrMissing(
    `list the events of pod ${name}`,
    () => kube.core.listNamespacedEvent({ namespace: kube.namespace, fieldSelector: `involvedObject.name=${name}` })
  ).pipe(Effect.orElseSucceed(() => undefined))
  const output = yield* podLogTail(kube, name)
  const lines = (events?.items ?? []).map(eventLine)
  return {
    output,
    text: [
      lines.length === 0 ? "" : `\nIts events:\n${lines.join("\n")}`,
      output === "" ? "" : `\nIts last log lines:\n${output}`
    ].join("")
  }
})

/** Why a ready pod stopped, for a disconnect (undefined while it runs). */
export const explainStop = (pod: V1Pod | undefined): Disconnect | undefined => {
  if (pod === undefined) return { outOfMemory: false, message: "the pod is gone (deleted)" }
  const oom = oomKill(pod)
  if (oom !== undefined) {
    const limit = pod.spec?.containers[0]?.resources?.limits?.["memory"]
    return {
      outOfMemory: true,
      message: `the pod was killed for exceeding its memory limit${
        limit === undefined ? "" : ` of ${limit}`
      } (OOMKilled)`
    }
  }
  if (pod.metadata?.deletionTimestamp !== undefined) return { outOfMemory: false, message: "the pod is being deleted" }
  return hasEnded(pod) ? { outOfMemory: false, message: podTrouble(pod) ?? "the pod stopped" } : undefined
}
