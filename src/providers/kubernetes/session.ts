/**
 * A session's objects made, each with its deletion in the current scope (run in reverse: the
 * ingress and service first, the pod, the key Secret, then the PVC only with `deleteWorkspace`):
 * after OpenHands' KubernetesRuntime, a workspace PVC (kept unless `deleteWorkspace`), the pod (the
 * runtime image, readiness probe on `/alive`), a ClusterIP service, an optional ingress, and a
 * Secret with the session key (the pod gets only its digest). In agentSandbox mode the same pod
 * template runs in a `Sandbox` of the session's own, or in one claimed on `warmPoolTemplate`
 * (sandboxSession.ts). Each object carries the owner's Lease's labels unless the session is kept
 * alive: it outlives its owner on purpose, so nothing may reap or expire it.
 */
import type { V1PodTemplateSpec } from "@kubernetes/client-node"
import { Clock, type Duration, Effect, Redacted } from "effect"
import { createHash } from "node:crypto"
import type { Kube } from "../../engines/kubernetes/client.ts"
import { egressNetworkPolicy } from "../../engines/kubernetes/egressPolicy.ts"
import {
  DELETE_WORKSPACE_LABEL,
  EGRESS_POLICY_LABEL,
  resourceNames,
  sessionLabels
} from "../../engines/kubernetes/labels.ts"
import {
  ingressHosts,
  keySecret,
  type Meta,
  serverIngress,
  serverService,
  workspaceClaim
} from "../../engines/kubernetes/manifests.ts"
import { createPod, deletePod } from "../../engines/kubernetes/pods.ts"
import { podTemplate, SERVER_PORT } from "../../engines/kubernetes/podSpec.ts"
import { waitUntilReady } from "../../engines/kubernetes/podWatch.ts"
import { runtimeImage } from "../../engines/kubernetes/runtimeImage.ts"
import { readVolumeSnapshot, snapshotTrouble } from "../../engines/kubernetes/volumeSnapshot.ts"
import type { EgressPolicy } from "../../network/policy.ts"
import { RuntimeStartError } from "../../schema/errors.ts"
import type { SandboxSpec } from "../../services/Driver.ts"
import type { KubernetesRuntimeOptions } from "./options.ts"
import type { KubeOwnerLease } from "./ownerLease.ts"
import type { PodLifecycle } from "./podLifecycle.ts"
import { createReleased, deletePodOnRelease, ensureClaim } from "./sessionObjects.ts"

/** agentSandbox mode's module (loaded only in that mode: it imports client-node), or undefined for bare pods. */
export type SandboxMode = typeof import("./sandboxSession.ts") | undefined

/** What every session of one layer shares: the cluster, the options, the owner's Lease, the mode. */
export interface KubeContext {
  readonly kube: Kube
  readonly options: KubernetesRuntimeOptions
  readonly lease: KubeOwnerLease
  readonly sandboxes: SandboxMode
  /** How long a pod may take to be ready (scheduled, pulled, started, answering): `aliveTimeout`. */
  readonly startDeadline: Duration.Input
  /** The `network` option, parsed: a NetworkPolicy is made before the pod (egressPolicy.ts). */
  readonly egress?: EgressPolicy | undefined
}

/**
 * How a bare pod made at `since` (on the Clock) is waited for (until `deadline` after its creation:
 * podWatch.ts), and paused: deleted, then made again from `template`.
 */
export const barePodLifecycle = (
  kube: Kube,
  name: string,
  deadline: Duration.Input,
  since: number,
  template?: V1PodTemplateSpec
): PodLifecycle => {
  const readySince = (created: number) =>
    waitUntilReady(kube, name, deadline, created).pipe(Effect.map((pod) => pod.status?.podIP))
  const ready = readySince(since)
  return template === undefined
    ? { ready }
    : {
      ready,
      pause: deletePod(kube, name),
      resume: Clock.currentTimeMillis.pipe(
        Effect.flatMap((created) => createPod(kube, name, template).pipe(Effect.andThen(readySince(created))))
      )
    }
}

/**
 * Refuse to start from a VolumeSnapshot that cannot fill a PVC (missing, failed, or this layer
 * makes Sandboxes, whose PVCs their controller makes): a PVC of it would stay Pending until the
 * start deadline, where this says why at once.
 */
const usableSnapshot = Effect.fn("usableSnapshot")(function*(ctx: KubeContext, name: string) {
  const refuse = (why: string) =>
    Effect.fail(new RuntimeStartError({ message: `Cannot start from the snapshot ${name}: ${why}`, reason: "other" }))
  if (ctx.sandboxes !== undefined) return yield* refuse("only a bare pod (mode: pod) starts from a snapshot")
  const trouble = snapshotTrouble(name, yield* readVolumeSnapshot(ctx.kube, name))
  if (trouble !== undefined) return yield* refuse(trouble.message)
})

/** The session's objects and its pod (not yet waited for), each deleted when the current scope closes. */
export const makeSession = Effect.fn("KubernetesRuntime.makeSession")(function*(ctx: KubeContext, spec: SandboxSpec) {
  const { kube, options, sandboxes } = ctx
  const { sessionId } = spec
  const names = resourceNames(sessionId)
  const kept = spec.keepAlive
  const owner = kept ? undefined : ctx.lease
  const labels = sessionLabels({ sessionId, owner: owner?.labels, extra: options.labels })
  const meta = (name: string): Meta => ({ name, labels, annotations: options.annotations ?? {} })
  const key = Redacted.value(spec.sessionKey)
  const keySha256 = createHash("sha256").update(key).digest("hex")
  const { core, networking, namespace } = kube
  // Before anything is made: a snapshot that cannot fill the PVC leaves nothing to remove.
  if (spec.fromSnapshot !== undefined) yield* usableSnapshot(ctx, spec.fromSnapshot)
  // The key Secret first: it exists as long as a session of this id does, so a second start of a
  // live session fails here, before it could touch that session's PVC.
  yield* createReleased(
    `Secret ${names.keySecret}`,
    () =>
      core.createNamespacedSecret({
        namespace,
        body: keySecret(
          ctx.egress === undefined
            ? meta(names.keySecret)
            : { ...meta(names.keySecret), labels: { ...labels, [EGRESS_POLICY_LABEL]: "true" } },
          key
        )
      }),
    () => core.deleteNamespacedSecret({ name: names.keySecret, namespace })
  )
  // Before the pod: no moment in which it runs with the cluster's default egress.
  if (ctx.egress !== undefined) {
    const body = egressNetworkPolicy(meta(names.networkPolicy), sessionId, ctx.egress)
    yield* createReleased(
      `NetworkPolicy ${names.networkPolicy}`,
      () => networking.createNamespacedNetworkPolicy({ namespace, body }),
      () => networking.deleteNamespacedNetworkPolicy({ name: names.networkPolicy, namespace })
    )
  }
  const deleteWorkspace = options.deleteWorkspace === true && !kept
  // Labelled so that the reaper deletes it too when the owner dies before its release.
  const workspace = deleteWorkspace
    ? { ...meta(names.pvc), labels: { ...labels, [DELETE_WORKSPACE_LABEL]: "true" } }
    : meta(names.pvc)
  const claimed = sandboxes !== undefined && options.warmPoolTemplate !== undefined
  const podOf = (claimName: string | undefined) =>
    Effect.map(runtimeImage(options, spec.sandbox, spec.user, spec.onStatus), (image) =>
      podTemplate({
        sessionId,
        image,
        labels,
        annotations: options.annotations ?? {},
        claimName,
        keySha256,
        options,
        sandbox: spec.sandbox,
        user: spec.user
      }))
  let started: { readonly podName: string; readonly lifecycle: PodLifecycle }
  if (sandboxes === undefined) {
    const template = yield* podOf(names.pvc)
    yield* ensureClaim(kube, workspaceClaim(workspace, options, spec.fromSnapshot), deleteWorkspace)
    const created = yield* Clock.currentTimeMillis
    yield* createPod(kube, names.pod, template)
    yield* deletePodOnRelease(kube, names.pod)
    started = {
      podName: names.pod,
      lifecycle: barePodLifecycle(kube, names.pod, ctx.startDeadline, created, template)
    }
  } else if (claimed) {
    started = yield* sandboxes.claimedSandbox({
      kube,
      name: names.pod,
      labels,
      templateName: options.warmPoolTemplate!,
      warmPool: options.warmPool,
      keySha256,
      deleteWorkspace,
      lease: owner,
      vscode: options.vscode === true,
      deadline: ctx.startDeadline
    })
  } else {
    started = yield* sandboxes.ownSandbox({
      kube,
      name: names.pod,
      labels,
      podTemplate: yield* podOf(undefined),
      workspace: workspaceClaim(workspace, options),
      deleteWorkspace,
      lease: owner,
      deadline: ctx.startDeadline
    })
  }
  // A claimed Sandbox's pod carries the template's labels, not ours: no service of ours can select it.
  if (!claimed) {
    yield* createReleased(
      `service ${names.service}`,
      () =>
        core.createNamespacedService({
          namespace,
          body: serverService(meta(names.service), labels, options.vscode === true)
        }),
      () => core.deleteNamespacedService({ name: names.service, namespace })
    )
  }
  const hosts = options.ingressDomain === undefined
    ? undefined
    : ingressHosts(sessionId, options.ingressDomain, options.vscode === true)
  const scheme = options.ingressTlsSecret === undefined ? "http" : "https"
  if (hosts !== undefined) {
    yield* createReleased(
      `ingress ${names.ingress}`,
      () =>
        networking.createNamespacedIngress({
          namespace,
          body: serverIngress(meta(names.ingress), hosts, names.service, {
            tlsSecret: options.ingressTlsSecret,
            className: options.ingressClassName
          })
        }),
      () => networking.deleteNamespacedIngress({ name: names.ingress, namespace })
    )
  }
  return {
    ...started,
    urls: {
      ...(claimed ? {} : { service: `http://${names.service}.${namespace}.svc:${SERVER_PORT}` }),
      ...(hosts === undefined ? {} : { ingress: `${scheme}://${hosts.server}` })
    },
    // VS Code on the ingress's `vscode-` host too, for anyone with the token (OpenHands' `vscode_url` there).
    ide: hosts?.vscode === undefined ? {} : { vscodeIngress: `${scheme}://${hosts.vscode}` }
  }
})
