/**
 * The objects beside a session's pod, after OpenHands' KubernetesRuntime: the workspace PVC
 * (`ReadWriteOnce`, `pvcStorageSize`/`pvcStorageClass`), the Secret holding the session key
 * (read back by the owner for `attach`; never mounted into the pod: server/sessionKey.ts), the
 * ClusterIP service in front of the server, and the optional ingress `<session>.<ingressDomain>`
 * (and `vscode-<session>.<ingressDomain>` with the plugin).
 */
import type { V1Ingress, V1PersistentVolumeClaim, V1Secret, V1Service } from "@kubernetes/client-node"
import { VSCODE_PORT } from "../../serverStart/serverTools.ts"
import type { PodOptions } from "./podOptions.ts"
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

/** The workspace PVC; `fromSnapshot`: filled from that VolumeSnapshot (its `dataSource`). */
export const workspaceClaim = (meta: Meta, options: PodOptions, fromSnapshot?: string): V1PersistentVolumeClaim => ({
  metadata: metadata(meta),
  spec: {
    accessModes: ["ReadWriteOnce"],
    resources: { requests: { storage: options.pvcStorageSize ?? "2Gi" } },
    ...(options.pvcStorageClass === undefined ? {} : { storageClassName: options.pvcStorageClass }),
    ...(fromSnapshot === undefined
      ? {}
      : { dataSource: { apiGroup: "snapshot.storage.k8s.io", kind: "VolumeSnapshot", name: fromSnapshot } })
  }
})

export const keySecret = (meta: Meta, key: string): V1Secret => ({
  metadata: metadata(meta),
  type: "Opaque",
  stringData: { [KEY_FIELD]: key }
})

/**
 * The server's service: a stable in-cluster name (`<name>.<namespace>.svc`) for the pod of the
 * moment; with `vscode`, VS Code's port too, where the ingress's `vscode-` host goes.
 */
export const serverService = (
  meta: Meta,
  selector: Readonly<Record<string, string>>,
  vscode = false
): V1Service => ({
  metadata: metadata(meta),
  spec: {
    type: "ClusterIP",
    selector: { ...selector },
    ports: [
      { name: "execution-server", port: SERVER_PORT, targetPort: "http" },
      ...(vscode ? [{ name: "vscode", port: VSCODE_PORT, targetPort: "vscode" }] : [])
    ]
  }
})

/** The hosts an ingress serves a session on: the action server's, and VS Code's when the plugin runs. */
export interface IngressHosts {
  readonly server: string
  readonly vscode: string | undefined
}

/**
 * `<session>.<domain>` for the action server; `vscode-<session>.<domain>` for the IDE (the prefix
 * OpenHands' clients give VS Code's host), so one wildcard certificate covers both.
 */
export const ingressHosts = (sessionId: string, domain: string, vscode: boolean): IngressHosts => ({
  server: `${sessionId}.${domain}`,
  vscode: vscode ? `vscode-${sessionId}.${domain}` : undefined
})

/** Every path of `host` to `port` of `service`. */
const hostRule = (host: string, service: string, port: number) => ({
  host,
  http: {
    paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: service, port: { number: port } } } }]
  }
})

/** The ingress of a session: its hosts to the server's service, over `tlsSecret`, served by `className`. */
export const serverIngress = (
  meta: Meta,
  hosts: IngressHosts,
  service: string,
  serving: { readonly tlsSecret: string | undefined; readonly className: string | undefined }
): V1Ingress => {
  const { tlsSecret, className } = serving
  const all = hosts.vscode === undefined ? [hosts.server] : [hosts.server, hosts.vscode]
  return {
    metadata: {
      ...metadata(meta),
      annotations: { ...meta.annotations, "external-dns.alpha.kubernetes.io/hostname": all.join(",") }
    },
    spec: {
      ...(className === undefined ? {} : { ingressClassName: className }),
      rules: [
        hostRule(hosts.server, service, SERVER_PORT),
        ...(hosts.vscode === undefined ? [] : [hostRule(hosts.vscode, service, VSCODE_PORT)])
      ],
      ...(tlsSecret === undefined ? {} : { tls: [{ hosts: all, secretName: tlsSecret }] })
    }
  }
}
