/**
 * The objects beside a session's pod, after OpenHands' KubernetesRuntime: the workspace PVC
 * (`ReadWriteOnce`, `pvcStorageSize`/`pvcStorageClass`), the Secret holding the session key
 * (read back by the owner for `attach`; never mounted into the pod: server/sessionKey.ts), the
 * ClusterIP service in front of the server, and the optional ingress `<session>.<ingressDomain>`.
 */
import type { V1Ingress, V1PersistentVolumeClaim, V1Secret, V1Service } from "@kubernetes/client-node"
import type { KubernetesRuntimeOptions } from "./options.ts"
import { SERVER_PORT } from "./podSpec.ts"

/** Name, labels and annotations of one object. */
export interface Meta {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly annotations: Readonly<Record<string, string>>
}

const metadata = (meta: Meta) => ({
  name: meta.name,
  labels: { ...meta.labels },
  annotations: { ...meta.annotations }
})

/** The key Secret's data key. */
export const KEY_FIELD = "session-api-key"

export const workspaceClaim = (meta: Meta, options: KubernetesRuntimeOptions): V1PersistentVolumeClaim => ({
  metadata: metadata(meta),
  spec: {
    accessModes: ["ReadWriteOnce"],
    resources: { requests: { storage: options.pvcStorageSize ?? "2Gi" } },
    ...(options.pvcStorageClass === undefined ? {} : { storageClassName: options.pvcStorageClass })
  }
})

export const keySecret = (meta: Meta, key: string): V1Secret => ({
  metadata: metadata(meta),
  type: "Opaque",
  stringData: { [KEY_FIELD]: key }
})

/** The server's service: a stable in-cluster name (`<name>.<namespace>.svc`) for the pod of the moment. */
export const serverService = (meta: Meta, selector: Readonly<Record<string, string>>): V1Service => ({
  metadata: metadata(meta),
  spec: {
    type: "ClusterIP",
    selector: { ...selector },
    ports: [{ name: "execution-server", port: SERVER_PORT, targetPort: "http" }]
  }
})

/** The host an ingress serves a session on. */
export const ingressHost = (sessionId: string, domain: string): string => `${sessionId}.${domain}`

export const serverIngress = (
  meta: Meta,
  host: string,
  service: string,
  tlsSecret: string | undefined
): V1Ingress => ({
  metadata: {
    ...metadata(meta),
    annotations: { ...meta.annotations, "external-dns.alpha.kubernetes.io/hostname": host }
  },
  spec: {
    rules: [{
      host,
      http: {
        paths: [{
          path: "/",
          pathType: "Prefix",
          backend: { service: { name: service, port: { number: SERVER_PORT } } }
        }]
      }
    }],
    ...(tlsSecret === undefined ? {} : { tls: [{ hosts: [host], secretName: tlsSecret }] })
  }
})
