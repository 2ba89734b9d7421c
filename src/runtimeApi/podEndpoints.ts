/**
 * Where the API server reaches a port of a sandbox's pod. Inside the cluster (`direct`): the
 * sandbox's service, `http://<service>.<namespace>.svc:<port>`, which follows the pod through
 * pause and resume. Outside it (`portForward`): a listener on 127.0.0.1 whose connections go
 * through the Kubernetes API server's port-forward to the pod of that name (localEndpoint.ts),
 * opened when first asked for and kept while this process lives; a stopped sandbox's are closed.
 * Those listeners exist only in this process, so their URLs change when it restarts: clients get
 * them only through proxy mode (main.ts refuses `portForward` without `--proxy`).
 */
import { Effect, Exit, Scope, Semaphore } from "effect"
import type { Kube } from "../engines/kubernetes/client.ts"
import type { ResourceNames } from "../engines/kubernetes/labels.ts"
import { localEndpoint, portForwardDialer } from "../provisioned/localEndpoint.ts"

export interface PodEndpoints {
  /** The URL of `port` of the sandbox's pod, as this process reaches it. */
  readonly url: (names: ResourceNames, port: number) => Effect.Effect<string>
  /** Close the listeners of a sandbox that is gone. */
  readonly forget: (names: ResourceNames) => Effect.Effect<void>
}

export const podEndpoints = Effect.fn("podEndpoints")(function*(kube: Kube, mode: "direct" | "portForward") {
  if (mode === "direct") {
    return {
      url: (names, port) => Effect.succeed(`http://${names.service}.${kube.namespace}.svc:${port}`),
      forget: () => Effect.void
    } satisfies PodEndpoints
  }
  const forward = new kube.k8s.PortForward(kube.config)
  /** Per pod: the scope of its listeners and their URLs by port. */
  const open = new Map<string, { readonly scope: Scope.Closeable; readonly urls: Map<number, string> }>()
  const layerScope = yield* Effect.scope
  // One opening at a time: two requests for the same port must not open two listeners.
  const opening = yield* Semaphore.make(1)
  const url = (names: ResourceNames, port: number) =>
    opening.withPermits(1)(Effect.gen(function*() {
      let entry = open.get(names.pod)
      if (entry === undefined) {
        entry = { scope: yield* Scope.fork(layerScope), urls: new Map() }
        open.set(names.pod, entry)
      }
      const known = entry.urls.get(port)
      if (known !== undefined) return known
      const made = yield* localEndpoint(portForwardDialer(forward, kube.namespace, () => names.pod, port)).pipe(
        Scope.provide(entry.scope),
        // Listening on an ephemeral loopback port fails only when the host is out of them.
        Effect.orDie
      )
      entry.urls.set(port, made)
      return made
    }))
  const forget = (names: ResourceNames) =>
    Effect.suspend(() => {
      const entry = open.get(names.pod)
      open.delete(names.pod)
      return entry === undefined ? Effect.void : Scope.close(entry.scope, Exit.void)
    })
  return { url, forget } satisfies PodEndpoints
})
