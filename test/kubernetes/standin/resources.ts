/**
 * The resource types the stand-in serves, and the discovery documents built
 * from them (`/api`, `/apis`, `/apis/<group>/<version>`), so a client can detect
 * the agent-sandbox CRDs the way it would on a real cluster.
 */

export interface ResourceType {
  /** "" for the core group. */
  readonly group: string
  readonly version: string
  readonly plural: string
  readonly kind: string
  readonly shortNames?: ReadonlyArray<string>
  /** Cluster-scoped (no namespace in its paths). */
  readonly clusterScoped?: boolean
}

export const apiVersionOf = (type: ResourceType) => type.group === "" ? type.version : `${type.group}/${type.version}`

const core = (plural: string, kind: string): ResourceType => ({ group: "", version: "v1", plural, kind })

export const Pods = core("pods", "Pod")
export const PersistentVolumeClaims = core("persistentvolumeclaims", "PersistentVolumeClaim")
export const Services = core("services", "Service")
export const Events = core("events", "Event")
export const Secrets = core("secrets", "Secret")
/** Stored; counted by admission.ts when a pod is created. */
export const ResourceQuotas = core("resourcequotas", "ResourceQuota")
export const Ingresses: ResourceType = {
  group: "networking.k8s.io",
  version: "v1",
  plural: "ingresses",
  kind: "Ingress"
}

/** Stored and listed, not enforced (network isolation is whatever the Docker bridge gives). */
export const NetworkPolicies: ResourceType = {
  group: "networking.k8s.io",
  version: "v1",
  plural: "networkpolicies",
  kind: "NetworkPolicy"
}

/** Leases: where an owner's heartbeat can live (the runtime's reaper reads it). */
export const Leases: ResourceType = { group: "coordination.k8s.io", version: "v1", plural: "leases", kind: "Lease" }

const agents = (group: string, plural: string, kind: string): ResourceType => ({
  group,
  version: "v1alpha1",
  plural,
  kind
})

export const Sandboxes = agents("agents.x-k8s.io", "sandboxes", "Sandbox")
export const SandboxClaims = agents("extensions.agents.x-k8s.io", "sandboxclaims", "SandboxClaim")
export const SandboxTemplates = agents("extensions.agents.x-k8s.io", "sandboxtemplates", "SandboxTemplate")
export const SandboxWarmPools = agents("extensions.agents.x-k8s.io", "sandboxwarmpools", "SandboxWarmPool")
export const SandboxExtensions: ReadonlyArray<ResourceType> = [SandboxClaims, SandboxTemplates, SandboxWarmPools]

const snapshotStorage = (plural: string, kind: string): ResourceType => ({
  group: "snapshot.storage.k8s.io",
  version: "v1",
  plural,
  kind
})

/** The CSI external-snapshotter's CRDs (snapshots.ts); the classes are cluster-scoped. */
export const VolumeSnapshots = snapshotStorage("volumesnapshots", "VolumeSnapshot")
export const VolumeSnapshotClasses: ResourceType = {
  ...snapshotStorage("volumesnapshotclasses", "VolumeSnapshotClass"),
  clusterScoped: true
}

/** Every served type: the built-ins, plus the agent-sandbox CRDs and the VolumeSnapshot CRDs when installed. */
export const resourceTypes = (withAgentSandbox: boolean, withSnapshots = false): ReadonlyArray<ResourceType> => [
  Pods,
  PersistentVolumeClaims,
  Services,
  Events,
  Secrets,
  ResourceQuotas,
  Ingresses,
  NetworkPolicies,
  Leases,
  ...(withAgentSandbox ? [Sandboxes, ...SandboxExtensions] : []),
  ...(withSnapshots ? [VolumeSnapshots, VolumeSnapshotClasses] : [])
]

const verbs = ["create", "delete", "get", "list", "patch", "update", "watch"]

const podSubresources = [
  { name: "pods/log", singularName: "", namespaced: true, kind: "Pod", verbs: ["get"] },
  {
    name: "pods/portforward",
    singularName: "",
    namespaced: true,
    kind: "PodPortForwardOptions",
    verbs: ["create", "get"]
  }
]

/** `APIResourceList` of one group version (`/api/v1`, `/apis/<group>/<version>`). */
export const resourceList = (types: ReadonlyArray<ResourceType>, groupVersion: string) => {
  const resources = types.filter((type) => apiVersionOf(type) === groupVersion)
  if (resources.length === 0) return undefined
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion,
    resources: resources.flatMap((type) => [
      {
        name: type.plural,
        singularName: type.kind.toLowerCase(),
        namespaced: type.clusterScoped !== true,
        kind: type.kind,
        verbs
      },
      ...(type === Pods ? podSubresources : [])
    ])
  }
}

/**
 * `APIGroupList` (`/apis`): the named groups, one version each; `agentSandboxVersion` names another
 * version of the agent-sandbox groups than the one served (discovery only: a cluster that dropped
 * v1alpha1, for a runtime's detection to be tested against).
 */
export const groupList = (types: ReadonlyArray<ResourceType>, agentSandboxVersion?: string) => {
  const groups = [...new Set(types.map((type) => type.group).filter((group) => group !== ""))]
  const agentGroups = new Set([Sandboxes.group, ...SandboxExtensions.map((type) => type.group)])
  return {
    kind: "APIGroupList",
    apiVersion: "v1",
    groups: groups.map((name) => {
      const version = agentSandboxVersion !== undefined && agentGroups.has(name)
        ? agentSandboxVersion
        : types.find((type) => type.group === name)!.version
      const preferred = { groupVersion: `${name}/${version}`, version }
      return { name, versions: [preferred], preferredVersion: preferred }
    })
  }
}

/** `APIVersions` (`/api`). */
export const coreVersions = {
  kind: "APIVersions",
  versions: ["v1"],
  serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: "127.0.0.1" }]
}
