/**
 * The stand-in's etcd: objects by type, namespace and name, one cluster-wide
 * resourceVersion counter, and the history of changes so a watch can resume
 * from a resourceVersion exactly as on a real API server.
 */
import { randomBytes, randomUUID } from "node:crypto"
import { apiVersionOf, type ResourceType } from "./resources.ts"
import { alreadyExists, invalid, notFound } from "./status.ts"

export interface OwnerReference {
  readonly apiVersion: string
  readonly kind: string
  readonly name: string
  readonly uid: string
  readonly controller?: boolean
}

export interface ObjectMeta {
  name: string
  namespace: string
  uid: string
  resourceVersion: string
  creationTimestamp: string
  generation?: number
  generateName?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
  ownerReferences?: Array<OwnerReference>
  finalizers?: Array<string>
  deletionTimestamp?: string
}

/** A stored object; controllers read `spec`/`status` through client-node's types. */
export interface KObject {
  apiVersion: string
  kind: string
  metadata: ObjectMeta
  spec?: any
  status?: any
  [field: string]: unknown
}

/** What a client (or controller) sends to create an object: the server fills in the rest of metadata. */
export interface NewObject {
  metadata?: Partial<ObjectMeta>
  spec?: any
  status?: any
  [field: string]: unknown
}

export type WatchType = "ADDED" | "MODIFIED" | "DELETED"

export interface Change {
  readonly type: WatchType
  readonly resource: ResourceType
  readonly object: KObject
}

const keyOf = (type: ResourceType, namespace: string, name: string) =>
  `${apiVersionOf(type)}/${type.plural}/${namespace}/${name}`

export const now = () => new Date().toISOString().replace(/\.\d+Z$/, "Z")

/** Whether `object`'s status has condition `type` with status "True" (pod Ready, Sandbox Ready). */
export const conditionTrue = (object: KObject | undefined, type: string): boolean =>
  (object?.status?.conditions ?? []).some((c: { type: string; status: string }) =>
    c.type === type && c.status === "True"
  )

/** Whether two statuses differ in more than their conditions' transition times (so a controller skips a no-op write). */
export const statusChanged = (before: unknown, after: unknown) => withoutTimes(before) !== withoutTimes(after)

const withoutTimes = (value: unknown) => JSON.stringify(value, (key, v) => key === "lastTransitionTime" ? undefined : v)

/** An owner reference to `owner`, as a controller sets it on what it creates. */
export const ownedBy = (owner: KObject): OwnerReference => ({
  apiVersion: owner.apiVersion,
  kind: owner.kind,
  name: owner.metadata.name,
  uid: owner.metadata.uid,
  controller: true
})

export class Store {
  private readonly objects = new Map<string, KObject>()
  private readonly listeners = new Set<(change: Change) => void>()
  /** Every change, oldest first: a watch from resourceVersion N replays those after N. */
  readonly history: Array<Change> = []
  private version = 1
  /** The oldest resourceVersion a watch may resume from (etcd's compaction); older ones are 410 Gone. */
  compactedAt = 0
  private readonly compactions = new Set<() => void>()

  /** Compact: forget the history, so a watch resuming from before now is told 410 Gone (its stream ends). */
  compact() {
    this.compactedAt = this.version
    this.history.length = 0
    for (const compacted of this.compactions) compacted()
  }

  /** Call `listener` when the history is compacted; returns the unsubscribe function. */
  onCompaction(listener: () => void): () => void {
    this.compactions.add(listener)
    return () => this.compactions.delete(listener)
  }

  get resourceVersion() {
    return String(this.version)
  }

  /** Call `listener` on every change (synchronously); returns the unsubscribe function. */
  subscribe(listener: (change: Change) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  private emit(type: WatchType, resource: ResourceType, object: KObject) {
    const change = { type, resource, object: structuredClone(object) }
    this.history.push(change)
    for (const listener of this.listeners) listener(change)
  }

  private stamp(object: KObject) {
    object.metadata.resourceVersion = String(++this.version)
    return object
  }

  find(type: ResourceType, namespace: string, name: string): KObject | undefined {
    const object = this.objects.get(keyOf(type, namespace, name))
    return object === undefined ? undefined : structuredClone(object)
  }

  get(type: ResourceType, namespace: string, name: string): KObject {
    const object = this.find(type, namespace, name)
    if (object === undefined) throw notFound(type.plural, name)
    return object
  }

  list(type: ResourceType, namespace: string | undefined, filter: (object: KObject) => boolean = () => true) {
    return [...this.objects.values()]
      .filter((object) =>
        object.apiVersion === apiVersionOf(type) && object.kind === type.kind
        && (namespace === undefined || object.metadata.namespace === namespace) && filter(object)
      )
      .map((object) => structuredClone(object))
  }

  /** Store a new object (name or generateName required); its stored form is returned. */
  create(type: ResourceType, namespace: string, body: NewObject): KObject {
    const metadata = body.metadata ?? {}
    const name = metadata.name ?? (metadata.generateName === undefined
      ? undefined
      : metadata.generateName + randomBytes(3).toString("hex").slice(0, 5))
    if (name === undefined || name === "") {
      throw invalid(type.kind, "", "metadata.name", "Required value: name or generateName is required")
    }
    if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name) || name.length > 253) {
      throw invalid(
        type.kind,
        name,
        "metadata.name",
        `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`
      )
    }
    const key = keyOf(type, namespace, name)
    if (this.objects.has(key)) throw alreadyExists(type.plural, name)
    const object = this.stamp({
      ...structuredClone(body),
      apiVersion: apiVersionOf(type),
      kind: type.kind,
      metadata: {
        ...structuredClone(metadata),
        name,
        namespace,
        uid: randomUUID(),
        resourceVersion: "",
        creationTimestamp: now(),
        generation: 1
      }
    })
    this.objects.set(key, object)
    this.emit("ADDED", type, object)
    return structuredClone(object)
  }

  /** Replace an object by `change(current)` (metadata identity kept); emits MODIFIED when it changed. */
  update(type: ResourceType, namespace: string, name: string, change: (current: KObject) => KObject): KObject {
    const current = this.get(type, namespace, name)
    const next = change(structuredClone(current))
    // As on an apiserver, a write that changes nothing keeps the resourceVersion and emits no event.
    if (JSON.stringify(next) === JSON.stringify(current)) return current
    const specChanged = JSON.stringify(next.spec) !== JSON.stringify(current.spec)
    const object = this.stamp({
      ...next,
      apiVersion: current.apiVersion,
      kind: current.kind,
      metadata: {
        ...next.metadata,
        name,
        namespace,
        uid: current.metadata.uid,
        creationTimestamp: current.metadata.creationTimestamp,
        generation: (current.metadata.generation ?? 1) + (specChanged ? 1 : 0)
      }
    })
    this.objects.set(keyOf(type, namespace, name), object)
    this.emit("MODIFIED", type, object)
    return structuredClone(object)
  }

  /** Remove an object now (no grace period); emits DELETED. Absent objects are ignored. */
  remove(type: ResourceType, namespace: string, name: string): KObject | undefined {
    const key = keyOf(type, namespace, name)
    const object = this.objects.get(key)
    if (object === undefined) return undefined
    this.objects.delete(key)
    this.emit("DELETED", type, this.stamp(object))
    return structuredClone(object)
  }
}
