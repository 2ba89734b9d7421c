/**
 * A session found in the cluster (`find`: attach by session id), by the key Secret that anchors
 * it: its pod of the moment (a claimed Sandbox's, when claims are this layer's mode), its state,
 * and the session key the Secret holds; and how such a session is removed on release.
 */
import type { V1Secret } from "@kubernetes/client-node"
import { Clock, Effect } from "effect"
import { kubeCallOrMissing, readPodOrMissing } from "../../engines/kubernetes/client.ts"
import { EGRESS_POLICY_LABEL, OWNER_LABEL, resourceNames, SESSION_LABEL } from "../../engines/kubernetes/labels.ts"
import { KEY_FIELD } from "../../engines/kubernetes/manifests.ts"
import { deletePod } from "../../engines/kubernetes/pods.ts"
import { WORKSPACE } from "../../engines/kubernetes/podSpec.ts"
import { hasEnded } from "../../engines/kubernetes/startErrors.ts"
import { TAGS } from "../../hosted/ownerTags.ts"
import type { Found } from "../../services/Driver.ts"
import type { KubePod } from "./podLifecycle.ts"
import { barePodLifecycle, type KubeContext } from "./session.ts"
import { deleteClaim } from "./sessionObjects.ts"

/** The session `secret` anchors, as `find` lists it: its pod of the moment decides its state. */
export const foundSession = (ctx: KubeContext, secret: V1Secret) =>
  Effect.gen(function*() {
    const { kube, sandboxes } = ctx
    const labels = secret.metadata?.labels ?? {}
    const sessionId = labels[SESSION_LABEL] ?? ""
    const names = resourceNames(sessionId)
    const claim = sandboxes === undefined || ctx.options.warmPoolTemplate === undefined
      ? undefined
      : yield* sandboxes.boundSandbox(kube, names.pod)
    const podName = claim ?? names.pod
    const pod = yield* readPodOrMissing(kube, podName)
    // An attached pod's wait (if it is not ready yet) counts its deadline from this attach.
    const now = yield* Clock.currentTimeMillis
    const ref = { namespace: kube.namespace, name: podName, claim: claim === undefined ? undefined : names.pod }
    const handle: KubePod = {
      sessionId,
      podName,
      lifecycle: sandboxes === undefined
        ? barePodLifecycle(kube, podName, ctx.startDeadline, now)
        : sandboxes.sandboxLifecycle(kube, ref, ctx.startDeadline, () => Effect.void),
      made: undefined,
      urls: {},
      ide: {},
      ip: pod?.status?.podIP,
      paused: false,
      listeners: new Map(),
      networkPolicy: labels[EGRESS_POLICY_LABEL] === "true"
    }
    const key = secret.data?.[KEY_FIELD]
    return {
      sandbox: handle,
      id: podName,
      tags: {
        [TAGS.managed]: "true",
        [TAGS.session]: sessionId,
        [TAGS.keepAlive]: String(labels[OWNER_LABEL] === undefined),
        ...(key === undefined ? {} : { [TAGS.sessionKey]: Buffer.from(key, "base64").toString("utf8") })
      },
      state: pod !== undefined && !hasEnded(pod) ? "running" : "gone",
      workspace: WORKSPACE
    } satisfies Found<KubePod>
  })

/**
 * Delete what a session found in the cluster has: its Sandbox or claim, pod, service, ingress and
 * Secret, and its workspace PVC with `deleteWorkspace`, as a session of this layer's own would.
 */
export const removeFound = (ctx: KubeContext, pod: KubePod) =>
  Effect.gen(function*() {
    const { kube } = ctx
    const { core, networking, namespace } = kube
    const names = resourceNames(pod.sessionId)
    if (ctx.sandboxes !== undefined) {
      const claimed = ctx.options.warmPoolTemplate !== undefined
      yield* ctx.sandboxes.removeSandbox(kube, { namespace, name: pod.podName, claim: claimed ? names.pod : undefined })
    }
    yield* deletePod(kube, pod.podName)
    yield* kubeCallOrMissing(`delete service ${names.service}`, () =>
      core.deleteNamespacedService({ name: names.service, namespace }))
    yield* kubeCallOrMissing(`delete ingress ${names.ingress}`, () =>
      networking.deleteNamespacedIngress({ name: names.ingress, namespace }))
    if (pod.networkPolicy === true) {
      yield* kubeCallOrMissing(`delete NetworkPolicy ${names.networkPolicy}`, () =>
        networking.deleteNamespacedNetworkPolicy({ name: names.networkPolicy, namespace }))
    }
    yield* kubeCallOrMissing(`delete Secret ${names.keySecret}`, () =>
      core.deleteNamespacedSecret({ name: names.keySecret, namespace }))
    if (ctx.options.deleteWorkspace === true) {
      yield* deleteClaim(kube, names.pvc)
    }
  })
