/**
 * A small agent-sandbox controller for `agents.x-k8s.io/v1alpha1` Sandbox:
 * one pod named after the sandbox (from `spec.podTemplate`, owned by it),
 * `replicas` 1 runs it and 0 deletes it (the PVCs of `volumeClaimTemplates`,
 * named `<template>-<sandbox>`, stay), `shutdownTime` deletes the pod (and the
 * Sandbox under `shutdownPolicy: Delete`), `service: true` a headless Service,
 * and status reports replicas, selector, podIPs and the Ready condition with
 * the controller's reasons (DependenciesReady, DependenciesNotReady,
 * SandboxSuspended, SandboxExpired).
 */
import { createHash } from "node:crypto"
import { PersistentVolumeClaims, Pods, type ResourceType, Sandboxes, Services } from "./resources.ts"
import { conditionTrue, type KObject, type NewObject, now, ownedBy, statusChanged, type Store } from "./store.ts"

const SANDBOX_HASH_LABEL = "agents.x-k8s.io/sandbox-name-hash"

export interface SandboxDeps {
  readonly store: Store
  readonly createPod: (namespace: string, body: NewObject) => KObject
  readonly createClaim: (namespace: string, body: NewObject) => Promise<KObject>
  readonly remove: (type: ResourceType, namespace: string, name: string) => Promise<unknown>
}

interface ClaimTemplate {
  readonly metadata: { readonly name: string; readonly labels?: Record<string, string> }
  readonly spec: unknown
}

const hashOf = (name: string) => createHash("sha256").update(name).digest("hex").slice(0, 8)

const ready = (status: boolean, reason: string, message: string) => ({
  type: "Ready",
  status: status ? "True" : "False",
  reason,
  message,
  lastTransitionTime: now()
})

export class SandboxController {
  private readonly deps: SandboxDeps
  private readonly timers = new Map<string, NodeJS.Timeout>()
  private readonly unsubscribe: () => void

  constructor(deps: SandboxDeps) {
    this.deps = deps
    this.unsubscribe = deps.store.subscribe((change) => {
      const owner = change.object.metadata.ownerReferences?.find((ref) => ref.kind === "Sandbox")
      const name = change.resource === Sandboxes ? change.object.metadata.name : owner?.name
      if (name === undefined || (change.resource !== Sandboxes && change.resource !== Pods)) return
      if (change.resource === Sandboxes && change.type === "DELETED") return this.clearTimer(change.object)
      // After the change has been delivered to every watcher, never inside the store's emit.
      setImmediate(() => void this.reconcile(change.object.metadata.namespace, name).catch(() => {}))
    })
  }

  close() {
    this.unsubscribe()
    for (const timer of this.timers.values()) clearTimeout(timer)
  }

  private clearTimer(sandbox: KObject) {
    clearTimeout(this.timers.get(sandbox.metadata.uid))
    this.timers.delete(sandbox.metadata.uid)
  }

  private async reconcile(namespace: string, name: string) {
    const { store } = this.deps
    const sandbox = store.find(Sandboxes, namespace, name)
    if (sandbox === undefined || sandbox.metadata.deletionTimestamp !== undefined) return
    const spec = sandbox.spec ?? {}
    const shutdown = spec.shutdownTime ?? spec.lifecycle?.shutdownTime
    const expired = shutdown !== undefined && Date.parse(shutdown) <= Date.now()
    if (shutdown !== undefined && !expired && !this.timers.has(sandbox.metadata.uid)) {
      const delay = Math.min(Date.parse(shutdown) - Date.now(), 2 ** 31 - 1)
      // Forgotten when it fires: a shutdownTime moved later (an owner's heartbeat) is timed again.
      const { uid } = sandbox.metadata
      this.timers.set(
        uid,
        setTimeout(() => {
          this.timers.delete(uid)
          void this.reconcile(namespace, name).catch(() => {})
        }, delay)
      )
    }
    const hash = hashOf(name)
    const pod = store.find(Pods, namespace, name)
    const live = pod !== undefined && pod.metadata.deletionTimestamp === undefined
    if (expired) {
      if (live) await this.deps.remove(Pods, namespace, name)
      if (store.find(Services, namespace, name) !== undefined) await this.deps.remove(Services, namespace, name)
      const policy = spec.shutdownPolicy ?? spec.lifecycle?.shutdownPolicy ?? "Retain"
      if (policy === "Delete") return void await this.deps.remove(Sandboxes, namespace, name)
      return this.setStatus(sandbox, {
        replicas: 0,
        conditions: [ready(false, "SandboxExpired", "Sandbox has expired")]
      })
    }
    const claims: ReadonlyArray<ClaimTemplate> = spec.volumeClaimTemplates ?? []
    for (const template of claims) {
      const claim = `${template.metadata.name}-${name}`
      if (store.find(PersistentVolumeClaims, namespace, claim) === undefined) {
        await this.deps.createClaim(namespace, {
          metadata: { name: claim, labels: { ...template.metadata.labels, [SANDBOX_HASH_LABEL]: hash } },
          spec: template.spec
        })
      }
    }
    if ((spec.replicas ?? 1) === 1 && pod === undefined) {
      const template = spec.podTemplate ?? {}
      this.deps.createPod(namespace, {
        metadata: {
          name,
          labels: { ...template.metadata?.labels, [SANDBOX_HASH_LABEL]: hash },
          annotations: { ...template.metadata?.annotations },
          ownerReferences: [ownedBy(sandbox)]
        },
        spec: {
          ...template.spec,
          volumes: [
            ...(template.spec?.volumes ?? []),
            ...claims.filter((claim) =>
              !(template.spec?.volumes ?? []).some((v: { name: string }) => v.name === claim.metadata.name)
            )
              .map((claim) => ({
                name: claim.metadata.name,
                persistentVolumeClaim: { claimName: `${claim.metadata.name}-${name}` }
              }))
          ]
        }
      })
    }
    if (spec.replicas === 0 && live) await this.deps.remove(Pods, namespace, name)
    if (spec.service === true && store.find(Services, namespace, name) === undefined) {
      store.create(Services, namespace, {
        metadata: { name, ownerReferences: [ownedBy(sandbox)] },
        spec: { clusterIP: "None", selector: { [SANDBOX_HASH_LABEL]: hash } }
      })
    }
    const current = store.find(Pods, namespace, name)
    const running = current !== undefined && current.metadata.deletionTimestamp === undefined
    const podReady = running && conditionTrue(current, "Ready")
    const service = spec.service === true
      ? { service: name, serviceFQDN: `${name}.${namespace}.svc.cluster.local` }
      : {}
    this.setStatus(sandbox, {
      replicas: running ? 1 : 0,
      selector: `${SANDBOX_HASH_LABEL}=${hash}`,
      ...(running && current.status?.podIP !== undefined ? { podIPs: [current.status.podIP] } : {}),
      ...service,
      conditions: [
        spec.replicas === 0
          ? ready(false, "SandboxSuspended", "Sandbox is suspended (replicas: 0)")
          : podReady
          ? ready(true, "DependenciesReady", "Pod is Ready")
          : ready(false, "DependenciesNotReady", `Pod exists with phase: ${current?.status?.phase ?? "None"}`)
      ]
    })
  }

  /** Write status when it changed (ignoring transition times), so reconciling again is a no-op. */
  private setStatus(
    sandbox: KObject,
    status: Record<string, unknown> & { readonly conditions: ReadonlyArray<ReturnType<typeof ready>> }
  ) {
    if (!statusChanged(sandbox.status, status)) return
    const before = sandbox.status?.conditions?.[0]
    const [condition] = status.conditions
    if (before !== undefined && condition !== undefined && before.status === condition.status) {
      condition.lastTransitionTime = before.lastTransitionTime
    }
    this.deps.store.update(
      Sandboxes,
      sandbox.metadata.namespace,
      sandbox.metadata.name,
      (object) => ({ ...object, status })
    )
  }
}
