/**
 * core/v1 Events the kubelet and scheduler would record (Scheduled, Pulling,
 * Failed, BackOff, Unhealthy, Killing...): the runtime reads them back through
 * `listNamespacedEvent({fieldSelector: "involvedObject.name=<pod>"})` to explain
 * a failed start. A repeated event is counted, not duplicated, as on a cluster.
 */
import { randomBytes } from "node:crypto"
import { Events } from "./resources.ts"
import { type KObject, now, type Store } from "./store.ts"

export const NODE_NAME = "standin-node"

export const recordEvent = (
  store: Store,
  involved: KObject,
  type: "Normal" | "Warning",
  reason: string,
  message: string,
  component = "kubelet"
) => {
  const { namespace, name, uid } = involved.metadata
  const same = store.list(
    Events,
    namespace,
    (event) =>
      event["involvedObject"] !== undefined && (event["involvedObject"] as { uid: string }).uid === uid
      && event["reason"] === reason && event["message"] === message
  )[0]
  if (same !== undefined) {
    store.update(Events, namespace, same.metadata.name, (event) => ({
      ...event,
      count: Number(event["count"]) + 1,
      lastTimestamp: now()
    }))
    return
  }
  store.create(Events, namespace, {
    metadata: { name: `${name}.${randomBytes(8).toString("hex")}` },
    involvedObject: {
      apiVersion: involved.apiVersion,
      kind: involved.kind,
      name,
      namespace,
      uid,
      resourceVersion: involved.metadata.resourceVersion,
      ...(involved.kind === "Pod" ? { fieldPath: `spec.containers{${involved.spec.containers[0].name}}` } : {})
    },
    reason,
    message,
    source: { component, host: NODE_NAME },
    firstTimestamp: now(),
    lastTimestamp: now(),
    count: 1,
    type,
    reportingComponent: component,
    reportingInstance: NODE_NAME
  })
}
