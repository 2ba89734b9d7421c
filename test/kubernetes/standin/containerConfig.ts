/**
 * What the kubelet resolves before it creates a container: the environment
 * (plain values, `fieldRef` to the pod's own metadata, `secretKeyRef` to a
 * stored Secret) and the security context, as Docker options. A missing Secret
 * or key is the kubelet's `CreateContainerConfigError`, retried until it appears.
 */
import type { V1Container, V1EnvVar, V1PodSpec } from "@kubernetes/client-node"
import { Secrets } from "./resources.ts"
import type { KObject, Store } from "./store.ts"

/** A container that cannot be configured yet (the kubelet's CreateContainerConfigError). */
export class ContainerConfigError extends Error {}

const FIELDS: Record<string, (pod: KObject) => string | undefined> = {
  "metadata.name": (pod) => pod.metadata.name,
  "metadata.namespace": (pod) => pod.metadata.namespace,
  "metadata.uid": (pod) => pod.metadata.uid,
  "spec.nodeName": (pod) => pod.spec?.nodeName,
  "spec.serviceAccountName": (pod) => pod.spec?.serviceAccountName ?? "default"
}

/** Why the stand-in cannot resolve `env` (configMapKeyRef, resourceFieldRef, other field paths), if it cannot. */
export const unsupportedEnv = (env: V1EnvVar): string | undefined => {
  const from = env.valueFrom
  if (from === undefined || from.secretKeyRef !== undefined) return undefined
  if (from.fieldRef !== undefined && FIELDS[from.fieldRef.fieldPath] !== undefined) return undefined
  return `Unsupported value: the stand-in resolves valueFrom.secretKeyRef and fieldRef ${
    Object.keys(FIELDS).join(", ")
  } only`
}

/**
 * `NAME=value` for each variable of the pod's container, or ContainerConfigError. A name given
 * twice takes its last value, as the kubelet resolves it (a claim's `env` appended to a template's).
 */
export const resolveEnv = (store: Store, pod: KObject): Array<string> => {
  const all = (pod.spec.containers[0] as V1Container).env ?? []
  return all.filter((variable, index) => !all.slice(index + 1).some((later) => later.name === variable.name))
    .map((env) => {
      const ref = env.valueFrom?.secretKeyRef
      if (ref !== undefined) {
        const name = ref.name ?? ""
        const secret = store.find(Secrets, pod.metadata.namespace, name)
        if (secret === undefined) throw new ContainerConfigError(`secret "${name}" not found`)
        const value = (secret["data"] as Record<string, string> | undefined)?.[ref.key]
        if (value === undefined) {
          throw new ContainerConfigError(`couldn't find key ${ref.key} in Secret ${pod.metadata.namespace}/${name}`)
        }
        return `${env.name}=${Buffer.from(value, "base64").toString("utf8")}`
      }
      const field = env.valueFrom?.fieldRef?.fieldPath
      return `${env.name}=${field === undefined ? env.value ?? "" : FIELDS[field]!(pod) ?? ""}`
    })
}

/**
 * Docker options for the pod's and container's security context (user, capabilities,
 * no-new-privileges, read-only root); a `runAsNonRoot` the user breaks is a CreateContainerConfigError.
 */
export const securityOptions = (spec: V1PodSpec, container: V1Container) => {
  const context = container.securityContext
  const user = context?.runAsUser ?? spec.securityContext?.runAsUser
  const group = context?.runAsGroup ?? spec.securityContext?.runAsGroup
  // The kubelet's check: it cannot tell the image's user, so only a runAsUser it can see passes.
  if ((context?.runAsNonRoot ?? spec.securityContext?.runAsNonRoot) === true && (user === undefined || user === 0)) {
    throw new ContainerConfigError(
      user === 0
        ? `container's runAsUser breaks non-root policy (pod: "${container.name}", container: ${container.name})`
        : "container has runAsNonRoot and image will run as root"
    )
  }
  return {
    ...(user === undefined ? {} : { User: group === undefined ? String(user) : `${user}:${group}` }),
    HostConfig: {
      ...(context?.capabilities?.add === undefined ? {} : { CapAdd: context.capabilities.add }),
      ...(context?.capabilities?.drop === undefined ? {} : { CapDrop: context.capabilities.drop }),
      ...(context?.allowPrivilegeEscalation === false ? { SecurityOpt: ["no-new-privileges"] } : {}),
      ...(context?.readOnlyRootFilesystem === true ? { ReadonlyRootfs: true } : {})
    }
  }
}
