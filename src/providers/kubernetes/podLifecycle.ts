/**
 * A session's pod as the driver follows it, whatever made it (a bare pod, a Sandbox, a claim):
 * how its mode waits for it and pauses it (`PodLifecycle`), and how the owner reaches a port of it:
 * a listener on 127.0.0.1 (provisioned/localEndpoint.ts) carrying each connection to the pod IP
 * (inside the cluster) or through the API server's port-forward (outside it), opened when first
 * asked for, in the asking scope.
 */
import { Effect, type Scope } from "effect"
import type { Kube } from "../../engines/kubernetes/client.ts"
import type { PodNotStarted } from "../../engines/kubernetes/podWatch.ts"
import { localEndpoint, podIpDialer, portForwardDialer } from "../../provisioned/localEndpoint.ts"
import type { RuntimeStartError } from "../../schema/errors.ts"

/** How a mode waits for its pod and pauses it; each answers the ready pod's IP. */
export interface PodLifecycle {
  /** Until the pod is ready (or why it cannot be). */
  readonly ready: Effect.Effect<string | undefined, RuntimeStartError | PodNotStarted>
  /** Take the pod away, keeping the workspace; undefined when it cannot be brought back (a bare pod found). */
  readonly pause?: Effect.Effect<void, RuntimeStartError>
  /** Bring it back and wait until it is ready. */
  readonly resume?: Effect.Effect<string | undefined, RuntimeStartError | PodNotStarted>
}

/** One session's pod: its name, its IP of the moment (undefined while paused), and its local listeners. */
export interface KubePod {
  readonly sessionId: string
  /** The pod's name: the session's, or a claimed Sandbox's (the controller names it). */
  readonly podName: string
  readonly lifecycle: PodLifecycle
  /** Closing it deletes what `create` made; undefined for a session found in the cluster (attach). */
  readonly made: Scope.Closeable | undefined
  /** `info.urls` of its service and ingress, and VS Code's ingress host (`vscodeIngress`). */
  readonly urls: Readonly<Record<string, string>>
  readonly ide: Readonly<Record<string, string>>
  ip: string | undefined
  paused: boolean
  /** The URL of each port's listener. */
  readonly listeners: Map<number, string>
  /** The session has an egress NetworkPolicy (the `network` option), removed with it. */
  readonly networkPolicy?: boolean
}

/** How connections reach a port of a pod: its IP, or the API server's port-forward. */
export const podDialer = (kube: Kube, mode: "direct" | "portForward") => {
  const forward = mode === "portForward" ? new kube.k8s.PortForward(kube.config) : undefined
  return (pod: KubePod, port: number) =>
    forward === undefined
      ? podIpDialer(() => pod.ip, port)
      : portForwardDialer(forward, kube.namespace, () => pod.podName, port)
}

/** The local URL of `port` of the pod, its listener opened in the calling scope when first asked for. */
export const podUrl = (dial: ReturnType<typeof podDialer>, pod: KubePod, port: number) =>
  Effect.suspend(() => {
    const known = pod.listeners.get(port)
    if (known !== undefined) return Effect.succeed(known)
    return localEndpoint(dial(pod, port)).pipe(
      // Listening on an ephemeral loopback port fails only when the host is out of them.
      Effect.orDie,
      Effect.tap((url) => Effect.sync(() => pod.listeners.set(port, url)))
    )
  }) as Effect.Effect<string, never, Scope.Scope>
