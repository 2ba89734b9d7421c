/**
 * The stand-in Kubernetes API server: plain HTTP on 127.0.0.1 with a bearer
 * token, written into a real kubeconfig file, so @kubernetes/client-node is used
 * exactly as against a cluster (`KubeConfig.loadFromFile`; client-node 2.x
 * refuses an http:// server unless the cluster sets `insecure-skip-tls-verify`,
 * so the kubeconfig does; with `tls: true` it names a self-signed CA instead). Routes follow the
 * REST layout of kube-apiserver (`/api/v1/namespaces/{ns}/{plural}/{name}`,
 * `/apis/{group}/{version}/...`, discovery, `?watch=true`, the pod portforward
 * WebSocket); the controllers (kubelet, PVCs, Sandbox) run pods as containers.
 */
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { createServer as createHttpsServer } from "node:https"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Duplex } from "node:stream"
import { applyHttpFault, Faults } from "../../providers/faults.ts"
import { admission, type NamespaceLabels } from "./admission.ts"
import { ClaimController } from "./claims.ts"
import { removeAll } from "./docker.ts"
import { applyPatch } from "./patch.ts"
import { Kubelet } from "./pods.ts"
import { forwardTarget, portForwarder, refuseUpgrade } from "./portForward.ts"
import { authorize, type PolicyRule, verbOf } from "./rbac.ts"
import {
  apiVersionOf,
  coreVersions,
  groupList,
  PersistentVolumeClaims,
  Pods,
  resourceList,
  type ResourceType,
  resourceTypes,
  Sandboxes,
  Secrets,
  Services,
  VolumeSnapshots
} from "./resources.ts"
import { SandboxController } from "./sandboxes.ts"
import { matcher } from "./selectors.ts"
import { type SnapshotClass, SnapshotController } from "./snapshots.ts"
import { ApiError, badRequest, conflict, invalid, notFound, statusBody, success } from "./status.ts"
import { type KObject, type NewObject, Store } from "./store.ts"
import { selfSignedCertificate } from "./tls.ts"
import { Volumes } from "./volumes.ts"
import { serveWatch } from "./watch.ts"

export interface StandInOptions {
  /** Serve the agent-sandbox CRDs (default true); false makes a cluster without them. */
  readonly agentSandbox?: boolean
  /** Serve HTTPS with a fresh self-signed certificate named in the kubeconfig (default: plain HTTP). */
  readonly tls?: boolean
  /** Upper bound of the readiness probe period (default 250 ms; a kubelet's default is 10 s). */
  readonly probePeriodMs?: number
  /**
   * Labels of namespaces (every namespace exists; one not named has only its name's label): a
   * `pod-security.kubernetes.io/enforce` label makes Pod Security admit its pods (admission.ts).
   */
  readonly namespaces?: NamespaceLabels
  /** The agent-sandbox groups' version discovery reports (default the served v1alpha1; discovery only). */
  readonly agentSandboxVersion?: string
  /**
   * Authorize every request by these rules, a namespaced Role's (rbac.ts `docsRole`: the docs' Role;
   * cluster-scoped requests are refused); default: everything allowed.
   */
  readonly rbac?: ReadonlyArray<PolicyRule>
  /** How often a watch that allows bookmarks gets one (default 10 s). */
  readonly bookmarkMs?: number
  /**
   * Serve the VolumeSnapshot API (`snapshot.storage.k8s.io/v1`, snapshots.ts) with these
   * VolumeSnapshotClasses; default: not served (a cluster without the external-snapshotter).
   */
  readonly volumeSnapshots?: { readonly classes: ReadonlyArray<SnapshotClass> }
}

export interface StandIn {
  /** A kubeconfig file naming the stand-in (context `standin`, namespace `default`). */
  readonly kubeconfigPath: string
  readonly url: string
  /** The label value on every container and volume this stand-in made. */
  readonly instance: string
  /** Cut every open port-forward WebSocket (to test a runtime's reconnect); how many were open. */
  readonly dropPortForwards: () => number
  /**
   * What passes by itself on a live cluster, held by a test: no room on the node until the returned
   * function is called (pods stay Unschedulable, as while an autoscaler adds a node), PVCs Pending
   * until then (a slow provisioner), and one failed pull of an image (a registry's blip).
   */
  /** Faults the next matching requests meet (test/providers/faults.ts), before authentication and routing. */
  readonly faults: Faults
  /** Every request served, in order (method and path with its query): how a test counts lists and watches. */
  readonly requests: ReadonlyArray<{ readonly method: string; readonly url: string }>
  /** Compact the history: open watches end with 410 Expired, and resuming from before now is refused so. */
  readonly compact: () => void
  /** End every open watch as its time-out would (a last bookmark where allowed), as an apiserver does every few minutes. */
  readonly endWatches: () => void
  readonly weather: {
    readonly holdCapacity: () => () => void
    readonly holdBinding: () => () => void
    readonly failNextPull: (image?: string) => void
  }
  /** Stop serving and remove every container and volume it made. */
  readonly close: () => Promise<void>
}

/** A path below `/api/v1` or `/apis/{group}/{version}`, split into what a handler needs. */
interface Route {
  readonly type: ResourceType
  readonly namespace: string | undefined
  readonly name: string | undefined
  readonly subresource: string | undefined
}

const PATH = /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))(?:\/namespaces\/([^/]+))?\/([^/]+)(?:\/([^/]+))?(?:\/([^/]+))?$/

const readBody = async (request: IncomingMessage): Promise<unknown> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  const text = Buffer.concat(chunks).toString("utf8")
  if (text === "") return {}
  try {
    return JSON.parse(text)
  } catch {
    throw badRequest(`the request body is not valid JSON: ${text.slice(0, 40)}`)
  }
}

const send = (response: ServerResponse, code: number, body: unknown) => {
  response.writeHead(code, { "content-type": "application/json" })
  response.end(JSON.stringify(body))
}

/** A Secret's `stringData` is merged into `data` (base64) on write, as the apiserver does. */
const withData = ({ stringData, ...secret }: NewObject): NewObject => ({
  type: "Opaque",
  ...secret,
  data: {
    ...(secret["data"] as Record<string, string> | undefined),
    ...Object.fromEntries(
      Object.entries((stringData ?? {}) as Record<string, string>).map((
        [key, value]
      ) => [key, Buffer.from(value).toString("base64")])
    )
  }
})

const kubeconfig = (url: string, token: string, ca: Buffer | undefined) =>
  `apiVersion: v1
kind: Config
clusters:
- name: standin
  cluster:
    server: ${url}
    ${ca === undefined ? "insecure-skip-tls-verify: true" : `certificate-authority-data: ${ca.toString("base64")}`}
contexts:
- name: standin
  context:
    cluster: standin
    user: standin
    namespace: default
current-context: standin
users:
- name: standin
  user:
    token: ${token}
`

/** Start a stand-in API server on 127.0.0.1 (a free port) and write its kubeconfig. */
export const startStandIn = async (options: StandInOptions = {}): Promise<StandIn> => {
  const types = resourceTypes(options.agentSandbox ?? true, options.volumeSnapshots !== undefined)
  const instance = randomBytes(4).toString("hex")
  const token = randomBytes(16).toString("hex")
  const store = new Store()
  const volumes = new Volumes(store, instance)
  const admitting = admission(store, options.namespaces ?? {})
  const kubelet = new Kubelet(store, volumes, admitting, instance, options.probePeriodMs ?? 250)
  const forwarder = portForwarder()
  const snapshots = options.volumeSnapshots === undefined
    ? undefined
    : new SnapshotController(
      store,
      instance,
      (ns, claim) => volumes.volumeOf(ns, claim),
      options.volumeSnapshots.classes
    )
  volumes.snapshots = snapshots

  const remove = async (type: ResourceType, namespace: string, name: string): Promise<KObject | undefined> => {
    if (type === Pods) return kubelet.delete(namespace, name)
    if (type === PersistentVolumeClaims) return volumes.delete(namespace, name)
    if (type === VolumeSnapshots && snapshots !== undefined) return snapshots.delete(namespace, name)
    return store.remove(type, namespace, name)
  }
  const sandboxes = types.includes(Sandboxes)
    ? new SandboxController({
      store,
      createPod: (namespace, body) => kubelet.create(namespace, body),
      createClaim: (namespace, body) => volumes.create(namespace, body),
      remove
    })
    : undefined
  const claims = sandboxes === undefined ? undefined : new ClaimController({ store, remove })
  // Garbage collection: deleting an owner deletes what it owns (a Sandbox's pod and service).
  store.subscribe((change) => {
    if (change.type !== "DELETED") return
    for (const type of types) {
      for (
        const owned of store.list(
          type,
          change.object.metadata.namespace,
          (object) => (object.metadata.ownerReferences ?? []).some((ref) => ref.uid === change.object.metadata.uid)
        )
      ) {
        setImmediate(() => void remove(type, owned.metadata.namespace, owned.metadata.name).catch(() => {}))
      }
    }
  })

  let serviceCount = 0
  /** A ClusterIP service gets an address from 10.96.0.0/16, as the apiserver's allocator gives one. */
  const withClusterIP = (service: NewObject): NewObject => {
    if (service.spec?.clusterIP !== undefined) return service
    const ip = `10.96.${Math.floor(++serviceCount / 256)}.${serviceCount % 256}`
    return { ...service, spec: { type: "ClusterIP", ...service.spec, clusterIP: ip, clusterIPs: [ip] } }
  }

  const route = (url: URL): Route | undefined => {
    const match = PATH.exec(url.pathname)
    if (match === null) return undefined
    const [, core, group, version, namespace, plural, name, subresource] = match
    const type = types.find((t) =>
      t.plural === plural && (core !== undefined ? t.group === "" : t.group === group && t.version === version)
    )
    return type === undefined ? undefined : { type, namespace, name, subresource }
  }

  const create = async (type: ResourceType, namespace: string, body: NewObject) => {
    if (body.metadata?.namespace !== undefined && body.metadata.namespace !== namespace) {
      throw badRequest("the namespace of the provided object does not match the namespace sent on the request")
    }
    const { status: _ignored, ...object } = body
    if (type === Pods) return kubelet.create(namespace, object)
    if (type === PersistentVolumeClaims) return volumes.create(namespace, object)
    if (type === Services) return store.create(type, namespace, withClusterIP(object))
    if (type === Secrets) return store.create(type, namespace, withData(object))
    if (type === VolumeSnapshots && snapshots !== undefined) return snapshots.create(namespace, object)
    return store.create(type, namespace, object)
  }

  /** PUT and PATCH: a new spec/metadata (or, on `/status`, a new status) from `change`. */
  const modify = (target: Route, namespace: string, name: string, change: (current: KObject) => KObject) => {
    const status = target.subresource === "status"
    return store.update(target.type, namespace, name, (current) => {
      const next = change(current)
      if (next.metadata.resourceVersion && next.metadata.resourceVersion !== current.metadata.resourceVersion) {
        throw conflict(target.type.plural, name)
      }
      if (status) return { ...current, status: next.status }
      if (target.type === Pods && JSON.stringify(next.spec) !== JSON.stringify(current.spec)) {
        throw invalid(
          "Pod",
          name,
          "spec",
          "Forbidden: pod updates may not change fields other than `spec.containers[*].image`, `spec.activeDeadlineSeconds` and `spec.tolerations` (the stand-in changes none)"
        )
      }
      // Deletion is only ever started by DELETE, never written by a client.
      const { deletionTimestamp: _written, ...metadata } = next.metadata
      const { deletionTimestamp } = current.metadata
      return {
        ...next,
        metadata: { ...metadata, ...(deletionTimestamp === undefined ? {} : { deletionTimestamp }) },
        status: current.status
      }
    })
  }

  const requests: Array<{ readonly method: string; readonly url: string }> = []
  const openWatches = new Set<() => void>()
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? "/", "http://standin")
    const method = request.method ?? "GET"
    requests.push({ method, url: `${url.pathname}${url.search}` })
    if (url.pathname === "/api") return send(response, 200, coreVersions)
    if (url.pathname === "/apis") return send(response, 200, groupList(types, options.agentSandboxVersion))
    if (url.pathname === "/version") {
      return send(response, 200, { major: "1", minor: "31", gitVersion: "v1.31.0-standin" })
    }
    const discovery = /^\/(?:api\/(v1)|apis\/([^/]+\/[^/]+))$/.exec(url.pathname)
    if (discovery !== null) {
      const list = resourceList(types, discovery[1] ?? discovery[2]!)
      if (list !== undefined) return send(response, 200, list)
    }
    const namespaceOnly = /^\/api\/v1\/namespaces\/([^/]+)$/.exec(url.pathname)
    if (namespaceOnly !== null && method === "GET") {
      if (options.rbac !== undefined) {
        authorize(options.rbac, {
          verb: "get",
          group: "",
          resource: "namespaces",
          namespace: undefined,
          name: namespaceOnly[1]
        })
      }
      return send(response, 200, {
        kind: "Namespace",
        apiVersion: "v1",
        metadata: { name: namespaceOnly[1], labels: admitting.labelsOf(namespaceOnly[1]!) },
        status: { phase: "Active" }
      })
    }
    const target = route(url)
    if (target === undefined) throw new ApiError(404, "NotFound", "the server could not find the requested resource")
    const { type, namespace, name, subresource } = target
    if (options.rbac !== undefined) {
      authorize(options.rbac, {
        verb: verbOf(method, name !== undefined, ["true", "1"].includes(url.searchParams.get("watch") ?? "")),
        group: type.group,
        resource: subresource === undefined || subresource === "status" ? type.plural : `${type.plural}/${subresource}`,
        namespace,
        name
      })
    }
    if (name === undefined) {
      const matches = matcher(url.searchParams.get("labelSelector"), url.searchParams.get("fieldSelector"))
      if (method === "GET" && ["true", "1"].includes(url.searchParams.get("watch") ?? "")) {
        const timeout = url.searchParams.get("timeoutSeconds")
        return serveWatch(store, {
          type,
          namespace,
          matches,
          resourceVersion: url.searchParams.get("resourceVersion"),
          timeoutSeconds: timeout === null ? undefined : Number(timeout),
          allowWatchBookmarks: url.searchParams.get("allowWatchBookmarks") === "true",
          bookmarkMs: options.bookmarkMs ?? 10_000,
          register: (end) => {
            openWatches.add(end)
            return () => openWatches.delete(end)
          }
        }, response)
      }
      if (method === "GET") {
        return send(response, 200, {
          kind: `${type.kind}List`,
          apiVersion: apiVersionOf(type),
          metadata: { resourceVersion: store.resourceVersion },
          items: store.list(type, namespace, matches)
        })
      }
      if (method === "POST" && namespace !== undefined) {
        return send(response, 201, await create(type, namespace, await readBody(request) as NewObject))
      }
    } else if (type === Pods && namespace !== undefined && subresource === "log" && method === "GET") {
      const tail = url.searchParams.get("tailLines")
      const text = await kubelet.logs(namespace, name, tail === null ? undefined : Number(tail))
      response.writeHead(200, { "content-type": "text/plain" })
      return void response.end(text)
    } else if (type.clusterScoped === true && namespace === undefined && subresource === undefined) {
      if (method === "GET") return send(response, 200, store.get(type, "", name))
    } else if (namespace !== undefined && (subresource === undefined || subresource === "status")) {
      if (method === "GET") return send(response, 200, store.get(type, namespace, name))
      if (method === "PUT") {
        const body = await readBody(request) as KObject
        if (body.metadata?.name !== name) {
          throw badRequest(
            `the name of the object (${body.metadata?.name}) does not match the name on the URL (${name})`
          )
        }
        return send(response, 200, modify(target, namespace, name, () => body))
      }
      if (method === "PATCH") {
        const body = await readBody(request)
        const contentType = request.headers["content-type"] ?? ""
        return send(
          response,
          200,
          modify(target, namespace, name, (current) => applyPatch(current, contentType, body) as KObject)
        )
      }
      if (method === "DELETE") {
        const removed = await remove(type, namespace, name)
        if (removed === undefined) throw notFound(type.plural, name)
        // Pods, PVCs and Services answer with the object (client-node types them so); the rest with a Status.
        const answersObject = type === Pods || type === PersistentVolumeClaims || type === Services
        return send(
          response,
          200,
          answersObject ? removed : success({ name, group: type.group, kind: type.plural, uid: removed.metadata.uid })
        )
      }
    }
    throw new ApiError(405, "MethodNotAllowed", `the server does not allow this method on the requested resource`)
  }

  const authorized = (request: IncomingMessage) => request.headers.authorization === `Bearer ${token}`
  const unauthorized = new ApiError(401, "Unauthorized", "Unauthorized")

  const directory = mkdtempSync(join(tmpdir(), "k8s-standin-"))
  const tls = options.tls === true ? selfSignedCertificate(directory) : undefined
  const faults = new Faults()
  const serve = (request: IncomingMessage, response: ServerResponse) => {
    const fault = faults.take(request.method ?? "GET", new URL(request.url ?? "/", "http://standin").pathname)
    const faulted = fault === undefined ? Promise.resolve(false) : applyHttpFault(fault, request, response, statusBody)
    const answer = faulted.then((done) =>
      done ? undefined : authorized(request) ? handle(request, response) : Promise.reject(unauthorized)
    )
    answer.catch((error: unknown) => {
      const failure = error instanceof ApiError
        ? error
        : new ApiError(500, "InternalError", `Internal error occurred: ${String(error)}`)
      if (!response.headersSent) send(response, failure.code, failure.body)
      else response.end()
    })
  }
  const server = tls === undefined ? createServer(serve) : createHttpsServer(tls, serve)
  server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    try {
      if (!authorized(request)) throw unauthorized
      const url = new URL(request.url ?? "/", "http://standin")
      const target = route(url)
      if (target?.type !== Pods || target.subresource !== "portforward" || !target.namespace || !target.name) {
        throw new ApiError(404, "NotFound", "the server could not find the requested resource")
      }
      // A WebSocket upgrade is a GET; current apiservers also ask for `create` on pods/portforward.
      for (const verb of ["get", "create"]) {
        if (options.rbac !== undefined) {
          authorize(options.rbac, {
            verb,
            group: "",
            resource: "pods/portforward",
            namespace: target.namespace,
            name: target.name
          })
        }
      }
      const { ip, ports } = forwardTarget(store, target.namespace, target.name, url.searchParams)
      forwarder.forward(request, socket, head, ip, ports)
    } catch (error) {
      refuseUpgrade(socket, error instanceof ApiError ? error : new ApiError(500, "InternalError", String(error)))
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `${tls === undefined ? "http" : "https"}://127.0.0.1:${(server.address() as AddressInfo).port}`
  const kubeconfigPath = join(directory, "kubeconfig")
  writeFileSync(kubeconfigPath, kubeconfig(url, token, tls?.cert), { mode: 0o600 })

  const close = async () => {
    sandboxes?.close()
    claims?.close()
    forwarder.close()
    await kubelet.close()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
    await removeAll(instance)
    rmSync(directory, { recursive: true, force: true })
  }
  const weather = {
    holdCapacity: () => kubelet.capacity.hold(),
    holdBinding: () => volumes.bound.hold(),
    failNextPull: (image?: string) => kubelet.failNextPull(image)
  }
  return {
    kubeconfigPath,
    url,
    instance,
    dropPortForwards: forwarder.drop,
    requests,
    faults,
    compact: () => store.compact(),
    endWatches: () => {
      for (const end of openWatches) end()
    },
    weather,
    close
  }
}

/** The stand-in as a scoped resource: closed (containers and volumes removed) with the scope. */
export const standIn = (options: StandInOptions = {}) =>
  Effect.acquireRelease(Effect.promise(() => startStandIn(options)), (running) => Effect.promise(running.close))
