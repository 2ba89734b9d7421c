/**
 * Reaching a session's running pod, whatever made it (a bare pod, a Sandbox, a claim): the
 * local endpoint (localEndpoint.ts) through the connection mode's dialer, pause and resume as the
 * mode does them, and the watch that reports the pod stopping under the runtime. The modes differ
 * only in `PodLifecycle`: how to wait for the pod, and how to take it away and bring it back.
 */
import { Effect } from "effect"
import type { RuntimeStartError } from "../../schema/errors.ts"
import { type Kube, kubeCallOrMissing } from "./client.ts"
import { type Dialer, localEndpoint, podIpDialer, portForwardDialer } from "./localEndpoint.ts"
import { connectMode, type KubernetesRuntimeOptions } from "./options.ts"
import { SERVER_PORT } from "./podSpec.ts"
import { podStopped } from "./podWatch.ts"
import { explainStop } from "./startErrors.ts"

/** How a mode waits for its pod and pauses it; each answers the ready pod's IP. */
export interface PodLifecycle {
  /** Until the pod is ready (or a start error naming why it cannot be). */
  readonly ready: Effect.Effect<string | undefined, RuntimeStartError>
  /** Take the pod away, keeping the workspace; undefined when the pod is not ours (attach). */
  readonly pause?: Effect.Effect<void, RuntimeStartError>
  /** Bring it back and wait until it is ready. */
  readonly resume?: Effect.Effect<string | undefined, RuntimeStartError>
}

/** The pod of the moment: its IP (undefined while paused), and whether its absence is on purpose. */
interface PodState {
  ip: string | undefined
  paused: boolean
}

/** The dialer of the connection mode: pod IP, or the API server's port-forward. */
const dialerFor = (kube: Kube, options: KubernetesRuntimeOptions, podName: string, state: PodState): Dialer =>
  connectMode(options.connect) === "direct"
    ? podIpDialer(() => state.ip, SERVER_PORT)
    : portForwardDialer(new kube.k8s.PortForward(kube.config), kube.namespace, () => podName, SERVER_PORT)

/**
 * The running pod `podName`, reachable: wait for it, then the local endpoint, pause/resume (when
 * the lifecycle has them) and the disconnect watch (a stop while paused is expected, not one).
 */
export const reachPod = Effect.fn("reachPod")(function*(
  kube: Kube,
  options: KubernetesRuntimeOptions,
  podName: string,
  lifecycle: PodLifecycle
) {
  const state: PodState = { ip: yield* lifecycle.ready, paused: false }
  const baseUrl = yield* localEndpoint(dialerFor(kube, options, podName, state))
  const readPod = kubeCallOrMissing(
    `read pod ${podName}`,
    () => kube.core.readNamespacedPod({ name: podName, namespace: kube.namespace })
  )
  const { pause, resume } = lifecycle
  return {
    baseUrl,
    ...(pause === undefined || resume === undefined ? {} : {
      pause: Effect.gen(function*() {
        state.paused = true
        state.ip = undefined
        yield* pause
      }),
      resume: Effect.gen(function*() {
        state.ip = yield* resume
        state.paused = false
      })
    }),
    disconnect: {
      stopped: podStopped(kube, podName, () => state.paused),
      explain: readPod.pipe(
        Effect.map(explainStop),
        Effect.orElseSucceed(() => ({ outOfMemory: false, message: "the pod cannot be read" }))
      )
    }
  }
})
