/**
 * The agent-sandbox extensions controller, reduced to what a runtime relies on:
 * a SandboxWarmPool keeps `replicas` Sandboxes made from its SandboxTemplate
 * (named `<pool>-<random>`, owned by the pool); a SandboxClaim adopts a ready
 * one of them (re-owned by the claim, the pool replenishes) unless `warmpool:
 * none`, or else creates a Sandbox named after the claim from the template
 * (plus `additionalPodMetadata` and `env`: a claim with env is always made anew, and only
 * as the template's `envVarsInjectionPolicy` allows). The claim's status names its Sandbox
 * and mirrors its Ready condition; `lifecycle.shutdownTime` ends it (Retain:
 * the Sandbox goes, the claim stays Expired; Delete: the claim goes too).
 */
import { randomBytes } from "node:crypto"
import { type ResourceType, SandboxClaims, Sandboxes, SandboxTemplates, SandboxWarmPools } from "./resources.ts"
import { conditionTrue, type KObject, now, ownedBy, statusChanged, type Store } from "./store.ts"

export interface ClaimDeps {
  readonly store: Store
  readonly remove: (type: ResourceType, namespace: string, name: string) => Promise<unknown>
}

const isReady = (sandbox: KObject) => conditionTrue(sandbox, "Ready")

const ownerUid = (object: KObject) => object.metadata.ownerReferences?.find((ref) => ref.controller)?.uid

/** A Sandbox spec from a SandboxTemplate (podTemplate, volumeClaimTemplates, service). */
const sandboxSpec = (template: KObject) => ({
  podTemplate: template.spec?.podTemplate ?? {},
  ...(template.spec?.volumeClaimTemplates === undefined
    ? {}
    : { volumeClaimTemplates: template.spec.volumeClaimTemplates }),
  ...(template.spec?.service === undefined ? {} : { service: template.spec.service }),
  replicas: 1
})

/**
 * Why the template's `envVarsInjectionPolicy` (default Disallowed) refuses the claim's env, as the
 * controller's Ready condition says it: any env under Disallowed (EnvVarsInjectionRejected), a
 * name the template defines under Allowed (a reconcile error); Overrides takes both.
 */
const envRefusal = (claim: KObject, template: KObject): { reason: string; message: string } | undefined => {
  const env: Array<{ name: string }> = claim.spec?.env ?? []
  if (env.length === 0) return undefined
  const policy = template.spec?.envVarsInjectionPolicy ?? "Disallowed"
  if (policy !== "Allowed" && policy !== "Overrides") {
    return {
      reason: "EnvVarsInjectionRejected",
      message:
        "environment variable injection rejected: environment variable injection is not allowed by the template policy"
    }
  }
  if (policy === "Overrides") return undefined
  const defined = new Set(
    (template.spec?.podTemplate?.spec?.containers?.[0]?.env ?? []).map((variable: { name: string }) => variable.name)
  )
  const clash = env.find((variable) => defined.has(variable.name))
  return clash === undefined ? undefined : {
    reason: "ReconcilerError",
    message: `environment variable override is not allowed by the template policy for variable "${clash.name}"`
  }
}

export class ClaimController {
  private readonly deps: ClaimDeps
  private readonly unsubscribe: () => void
  private readonly timers = new Map<string, NodeJS.Timeout>()
  private pending = false

  constructor(deps: ClaimDeps) {
    this.deps = deps
    const watched = [SandboxClaims, SandboxWarmPools, SandboxTemplates, Sandboxes]
    this.unsubscribe = deps.store.subscribe((change) => {
      if (!watched.includes(change.resource) || this.pending) return
      // One pass over every pool and claim after the current burst of changes.
      this.pending = true
      setImmediate(() => {
        this.pending = false
        void this.reconcile().catch(() => {})
      })
    })
  }

  close() {
    this.unsubscribe()
    for (const timer of this.timers.values()) clearTimeout(timer)
  }

  private async reconcile() {
    for (const pool of this.deps.store.list(SandboxWarmPools, undefined)) await this.reconcilePool(pool)
    for (const claim of this.deps.store.list(SandboxClaims, undefined)) await this.reconcileClaim(claim)
  }

  private template(namespace: string, ref: { name?: string } | undefined) {
    return ref?.name === undefined ? undefined : this.deps.store.find(SandboxTemplates, namespace, ref.name)
  }

  private setStatus(type: ResourceType, object: KObject, status: Record<string, unknown>) {
    if (!statusChanged(object.status, status)) return
    this.deps.store.update(type, object.metadata.namespace, object.metadata.name, (current) => ({ ...current, status }))
  }

  private async reconcilePool(pool: KObject) {
    const { store } = this.deps
    const { namespace, name } = pool.metadata
    const template = this.template(namespace, pool.spec?.sandboxTemplateRef)
    if (template === undefined) return
    const members = store.list(Sandboxes, namespace, (sandbox) => ownerUid(sandbox) === pool.metadata.uid)
    const wanted = Number(pool.spec?.replicas ?? 0)
    for (let count = members.length; count < wanted; count++) {
      store.create(Sandboxes, namespace, {
        metadata: {
          name: `${name}-${randomBytes(3).toString("hex").slice(0, 5)}`,
          labels: { "agents.x-k8s.io/pool": name },
          ownerReferences: [ownedBy(pool)]
        },
        spec: sandboxSpec(template)
      })
    }
    const surplus = [...members].sort((a, b) => Number(isReady(a)) - Number(isReady(b))).slice(
      0,
      Math.max(0, members.length - wanted)
    )
    for (const sandbox of surplus) await this.deps.remove(Sandboxes, namespace, sandbox.metadata.name)
    const current = store.list(Sandboxes, namespace, (sandbox) => ownerUid(sandbox) === pool.metadata.uid)
    this.setStatus(SandboxWarmPools, pool, {
      replicas: current.length,
      readyReplicas: current.filter(isReady).length,
      selector: `agents.x-k8s.io/pool=${name}`
    })
  }

  /** A ready pool member for `claim`'s template (from the pool its `warmpool` names, if it names one). */
  private warm(claim: KObject, template: KObject) {
    const policy = claim.spec?.warmpool ?? "default"
    if (policy === "none") return undefined
    const pools = this.deps.store.list(
      SandboxWarmPools,
      claim.metadata.namespace,
      (pool) =>
        pool.spec?.sandboxTemplateRef?.name === template.metadata.name &&
        (policy === "default" || pool.metadata.name === policy)
    )
    const uids = new Set(pools.map((pool) => pool.metadata.uid))
    return this.deps.store.list(
      Sandboxes,
      claim.metadata.namespace,
      (sandbox) => uids.has(ownerUid(sandbox) ?? "") && isReady(sandbox)
    )[0]
  }

  private async reconcileClaim(claim: KObject) {
    const { store } = this.deps
    const { namespace, name } = claim.metadata
    const shutdown = claim.spec?.lifecycle?.shutdownTime
    const owned = store.list(Sandboxes, namespace, (sandbox) => ownerUid(sandbox) === claim.metadata.uid)[0]
    if (shutdown !== undefined && Date.parse(shutdown) <= Date.now()) {
      if ((claim.spec?.lifecycle?.shutdownPolicy ?? "Retain") !== "Retain") {
        return void await this.deps.remove(SandboxClaims, namespace, name)
      }
      if (owned !== undefined) await this.deps.remove(Sandboxes, namespace, owned.metadata.name)
      return this.setStatus(SandboxClaims, claim, {
        conditions: [{
          type: "Ready",
          status: "False",
          reason: "ClaimExpired",
          message: "SandboxClaim has expired",
          lastTransitionTime: now()
        }]
      })
    }
    if (shutdown !== undefined && !this.timers.has(claim.metadata.uid)) {
      const delay = Math.min(Date.parse(shutdown) - Date.now(), 2 ** 31 - 1)
      // Forgotten when it fires: a shutdownTime moved later (an owner's heartbeat) is timed again.
      const { uid } = claim.metadata
      this.timers.set(
        uid,
        setTimeout(() => {
          this.timers.delete(uid)
          void this.reconcile().catch(() => {})
        }, delay)
      )
    }
    const template = this.template(namespace, claim.spec?.sandboxTemplateRef)
    if (owned === undefined && template === undefined) {
      const ref = claim.spec?.sandboxTemplateRef?.name
      return this.setStatus(SandboxClaims, claim, {
        conditions: [{
          type: "Ready",
          status: "False",
          reason: "TemplateNotFound",
          message: `SandboxTemplate "${ref}" not found`,
          lastTransitionTime: now()
        }]
      })
    }
    const refusal = owned === undefined ? envRefusal(claim, template!) : undefined
    if (refusal !== undefined) {
      return this.setStatus(SandboxClaims, claim, {
        conditions: [{ type: "Ready", status: "False", ...refusal, lastTransitionTime: now() }]
      })
    }
    const sandbox = owned ?? this.adopt(claim, template!)
    const ready = (sandbox.status?.conditions ?? []).find((c: { type: string }) => c.type === "Ready")
    this.setStatus(SandboxClaims, claim, {
      sandbox: {
        name: sandbox.metadata.name,
        ...(sandbox.status?.podIPs === undefined ? {} : { podIPs: sandbox.status.podIPs })
      },
      conditions: [
        ready ??
          {
            type: "Ready",
            status: "False",
            reason: "DependenciesNotReady",
            message: "Sandbox is not ready",
            lastTransitionTime: now()
          }
      ]
    })
  }

  /** Take a warm Sandbox for the claim (re-owned by it), or create one from the template. */
  private adopt(claim: KObject, template: KObject): KObject {
    const { store } = this.deps
    const { namespace, name } = claim.metadata
    const extra = claim.spec?.additionalPodMetadata ?? {}
    const env: Array<{ name: string; value: string }> = claim.spec?.env ?? []
    // A warm pod's environment is fixed: a claim that sets env is always made anew.
    const warm = env.length === 0 ? this.warm(claim, template) : undefined
    if (warm !== undefined) {
      return store.update(Sandboxes, namespace, warm.metadata.name, (sandbox) => ({
        ...sandbox,
        metadata: {
          ...sandbox.metadata,
          ownerReferences: [ownedBy(claim)],
          labels: { ...sandbox.metadata.labels, "agents.x-k8s.io/claim": name }
        }
      }))
    }
    const spec = sandboxSpec(template)
    const [first, ...others] = spec.podTemplate.spec?.containers ?? []
    const overridden = new Set(env.map((variable) => variable.name))
    return store.create(Sandboxes, namespace, {
      metadata: { name, labels: { "agents.x-k8s.io/claim": name }, ownerReferences: [ownedBy(claim)] },
      spec: {
        ...spec,
        podTemplate: {
          metadata: {
            labels: { ...spec.podTemplate.metadata?.labels, ...extra.labels },
            annotations: { ...spec.podTemplate.metadata?.annotations, ...extra.annotations }
          },
          spec: {
            ...spec.podTemplate.spec,
            containers: first === undefined ? [] : [{
              ...first,
              env: [...(first.env ?? []).filter((variable: { name: string }) => !overridden.has(variable.name)), ...env]
            }, ...others]
          }
        }
      }
    })
  }
}
