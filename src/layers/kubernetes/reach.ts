/**
 * Reaching a session's running pod, whatever made it (a bare pod, a Sandbox, a claim): the local
 * endpoints (localEndpoint.ts) through the connection mode's dialer, one for the server and one
 * for VS Code when the options ask for it, pause and resume as the mode does them, and the watch
 * that reports the pod stopping under the runtime. The modes differ only in `PodLifecycle`: how to
 * wait for the pod, and how to take it away and bring it back.
 */
import { Effect } from "effect"
import type { RuntimeStartError } from "../../schema/errors.ts"
import { type Dialer, localEndpoint, podIpDialer, portForwardDialer } from "../internal/localEndpoint.ts"
import { VSCODE_PORT } from "../internal/serverTools.ts"
import { type Kube, kubeCallOrMissing } from "./client.ts"
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

/** The connection mode's dialer to a port of the pod of the moment: pod IP, or the API server's port-forward. */
const dialerFor = (
  kube: Kube,
  options: KubernetesRuntimeOptions,
  podName: string,
  state: PodState
): (port: number) => Dialer => {
  if (connectMode(options.connect) === "direct") return (port) => podIpDialer(() => state.ip, port)
  const forward = new kube.k8s.PortForward(kube.config)
  return (port) => portForwardDialer(forward, kube.namespace, () => podName, port)
}

/**
 * The running pod `podName`, reachable: wait for it, then the local endpoints (the server's
 * `baseUrl`; `vscodeBase` for VS Code's port with `vscode: true`, else undefined), pause/resume
 * (when the lifecycle has them) and the disconnect watch (a stop while paused is expected, not one).
 */
export const reachPod = Effect.fn("reachPod")(function*(
  kube: Kube,
  options: KubernetesRuntimeOptions,
  podName: string,
  lifecycle: PodLifecycle
) {
  const state: PodState = { ip: yield* lifecycle.ready, paused: false }
  const dial = dialerFor(kube, options, podName, state)
  const baseUrl = yield* localEndpoint(dial(SERVER_PORT))
  const vscodeBase = options.vscode === true ? yield* localEndpoint(dial(VSCODE_PORT)) : undefined
  const readPod = kubeCallOrMissing(
    `read pod ${podName}`,
    () => kube.core.readNamespacedPod({ name: podName, namespace: kube.namespace })
  )
  const { pause, resume } = lifecycle
  return {
    baseUrl,
    vscodeBase,
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
