/**
 * The admission a pod passes before it is stored, as kube-apiserver's plugins refuse it (403
 * Forbidden, with their words): Pod Security for a namespace labelled
 * `pod-security.kubernetes.io/enforce` (`restricted` or `baseline`, at `latest`), and each
 * ResourceQuota of the namespace (a quota on a compute resource needs every container to name it;
 * no pod may take the namespace past a hard limit). Pods the controllers make (a Sandbox's) pass
 * the same checks.
 */
import type { V1Container, V1PodSpec } from "@kubernetes/client-node"
import { quantity } from "./docker.ts"
import { Pods, ResourceQuotas } from "./resources.ts"
import { ApiError } from "./status.ts"
import type { NewObject, Store } from "./store.ts"

/** Namespace name → its labels (a namespace not named has none). */
export type NamespaceLabels = Readonly<Record<string, Readonly<Record<string, string>>>>

export const ENFORCE_LABEL = "pod-security.kubernetes.io/enforce"

/** Capabilities `baseline` lets a container add (restricted: NET_BIND_SERVICE only). */
const BASELINE_CAPABILITIES = new Set(
  "AUDIT_WRITE CHOWN DAC_OVERRIDE FOWNER FSETID KILL MKNOD NET_BIND_SERVICE SETFCAP SETGID SETPCAP SETUID SYS_CHROOT"
    .split(" ")
)

/** Volume types `restricted` allows. */
const RESTRICTED_VOLUMES = [
  "configMap",
  "csi",
  "downwardAPI",
  "emptyDir",
  "ephemeral",
  "persistentVolumeClaim",
  "projected",
  "secret"
]

/** What `baseline` refuses, in Pod Security's words. */
const baselineViolations = (spec: V1PodSpec, container: V1Container): Array<string> => {
  const name = container.name
  const context = container.securityContext
  const violations: Array<string> = []
  if (spec.hostNetwork === true || spec.hostPID === true || spec.hostIPC === true) {
    violations.push("host namespaces (hostNetwork=true, hostPID=true or hostIPC=true)")
  }
  if (context?.privileged === true) {
    violations.push(`privileged (container "${name}" must not set securityContext.privileged=true)`)
  }
  const added = (context?.capabilities?.add ?? []).filter((capability) => !BASELINE_CAPABILITIES.has(capability))
  if (added.length > 0) {
    violations.push(`non-default capabilities (container "${name}" must not include ${added.join(", ")})`)
  }
  if ((spec.volumes ?? []).some((volume) => volume.hostPath !== undefined)) violations.push("hostPath volumes")
  return violations
}

/** What `restricted` refuses beyond `baseline`, in Pod Security's words. */
const restrictedViolations = (spec: V1PodSpec, container: V1Container): Array<string> => {
  const name = container.name
  const context = container.securityContext
  const pod = spec.securityContext
  const violations: Array<string> = []
  const volumes = (spec.volumes ?? []).filter((volume) =>
    !RESTRICTED_VOLUMES.some((type) => (volume as unknown as Record<string, unknown>)[type] !== undefined)
  )
  if (volumes.length > 0) {
    violations.push(`restricted volume types (volumes ${volumes.map((v) => `"${v.name}"`).join(", ")})`)
  }
  if (context?.allowPrivilegeEscalation !== false) {
    violations.push(
      `allowPrivilegeEscalation != false (container "${name}" must set securityContext.allowPrivilegeEscalation=false)`
    )
  }
  const drops = context?.capabilities?.drop ?? []
  const adds = (context?.capabilities?.add ?? []).filter((capability) => capability !== "NET_BIND_SERVICE")
  if (!drops.includes("ALL") || adds.length > 0) {
    violations.push(
      `unrestricted capabilities (container "${name}" must set securityContext.capabilities.drop=["ALL"])`
    )
  }
  if ((context?.runAsNonRoot ?? pod?.runAsNonRoot) !== true) {
    violations.push(`runAsNonRoot != true (pod or container "${name}" must set securityContext.runAsNonRoot=true)`)
  }
  if (pod?.runAsUser === 0 || context?.runAsUser === 0) violations.push("runAsUser=0 (pod must not set runAsUser=0)")
  const seccomp = context?.seccompProfile?.type ?? pod?.seccompProfile?.type
  if (seccomp !== "RuntimeDefault" && seccomp !== "Localhost") {
    violations.push(
      `seccompProfile (pod or container "${name}" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`
    )
  }
  return violations
}

/** The compute resources a quota counts, and where a container names each. */
const COMPUTE: Readonly<Record<string, (container: V1Container) => string | undefined>> = {
  "requests.cpu": (c) => c.resources?.requests?.["cpu"],
  "cpu": (c) => c.resources?.requests?.["cpu"],
  "requests.memory": (c) => c.resources?.requests?.["memory"],
  "memory": (c) => c.resources?.requests?.["memory"],
  "limits.cpu": (c) => c.resources?.limits?.["cpu"],
  "limits.memory": (c) => c.resources?.limits?.["memory"]
}

/** What a pod takes of `resource` (the sum over its containers). */
const usage = (spec: V1PodSpec, resource: string) =>
  spec.containers.reduce((sum, container) => sum + (quantity(COMPUTE[resource]!(container)) ?? 0), 0)

const forbidden = (name: string, message: string) =>
  new ApiError(403, "Forbidden", `pods "${name}" is forbidden: ${message}`, { name, kind: "pods" })

/** What a pod must pass before it is stored, and the namespaces' labels it is judged by. */
export interface Admission {
  /** The namespace's labels, as GET /api/v1/namespaces/{name} shows them. */
  readonly labelsOf: (namespace: string) => Readonly<Record<string, string>>
  /** Throw the apiserver's 403 for a pod its namespace does not admit. */
  readonly pod: (namespace: string, body: NewObject) => void
}

/** Each ResourceQuota of the namespace: every compute resource it counts named, none exceeded. */
const checkQuotas = (store: Store, namespace: string, name: string, spec: V1PodSpec) => {
  const running = store.list(
    Pods,
    namespace,
    (pod) => pod.status?.phase !== "Succeeded" && pod.status?.phase !== "Failed"
  )
  for (const quota of store.list(ResourceQuotas, namespace)) {
    const hard = Object.entries((quota.spec?.hard ?? {}) as Record<string, string>).filter(([resource]) =>
      COMPUTE[resource] !== undefined
    )
    const missing = hard.flatMap(([resource]) => {
      const unnamed = spec.containers.filter((container) => COMPUTE[resource]!(container) === undefined)
      return unnamed.length === 0 ? [] : [`${resource} for: ${unnamed.map((c) => c.name).join(",")}`]
    })
    if (missing.length > 0) {
      throw forbidden(name, `failed quota: ${quota.metadata.name}: must specify ${missing.join("; ")}`)
    }
    for (const [resource, limit] of hard) {
      const requested = usage(spec, resource)
      const used = running.reduce((sum, pod) => sum + usage(pod.spec as V1PodSpec, resource), 0)
      if (used + requested > quantity(limit)!) {
        throw forbidden(
          name,
          `exceeded quota: ${quota.metadata.name}, requested: ${resource}=${requested}, used: ${resource}=${used}, limited: ${resource}=${limit}`
        )
      }
    }
  }
}

export const admission = (store: Store, namespaces: NamespaceLabels): Admission => {
  const labelsOf = (namespace: string): Readonly<Record<string, string>> => ({
    "kubernetes.io/metadata.name": namespace,
    ...namespaces[namespace]
  })
  return {
    labelsOf,
    pod: (namespace, body) => {
      const name = body.metadata?.name ?? body.metadata?.generateName ?? ""
      const spec = body.spec as V1PodSpec
      const level = labelsOf(namespace)[ENFORCE_LABEL]
      if (level === "baseline" || level === "restricted") {
        const violations = spec.containers.flatMap((container) => [
          ...baselineViolations(spec, container),
          ...(level === "restricted" ? restrictedViolations(spec, container) : [])
        ])
        if (violations.length > 0) {
          throw forbidden(name, `violates PodSecurity "${level}:latest": ${[...new Set(violations)].join(", ")}`)
        }
      }
      checkQuotas(store, namespace, name, spec)
    }
  }
}
