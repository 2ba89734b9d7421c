/**
 * The `network` option on Kubernetes (docs/network.md): a NetworkPolicy of the session's own,
 * created before its pod and deleted with it, selecting the pod by its session label and listing
 * only egress: none at all for `"deny-all"` (DNS included: nothing to resolve a name with), or the
 * allow list's CIDR blocks. A NetworkPolicy cannot name hosts (it sees addresses, not the name a
 * connection was for), so host and domain rules are refused at start. The cluster's network plugin
 * enforces it; one that does not (kind's default kindnet before 1.31, flannel) silently does not,
 * which is the cluster's to fix: docs/network.md says how to check.
 */
import type { V1NetworkPolicy } from "@kubernetes/client-node"
import { cidrBlocks, type EgressPolicy, type EgressRule } from "../../network/policy.ts"
import { SESSION_LABEL } from "./labels.ts"
import type { Meta } from "./manifests.ts"

/** Why a NetworkPolicy cannot take a Host or Domain rule. */
export const NAMES_REFUSED =
  "a NetworkPolicy's egress rules take CIDR blocks, not names (it sees the address a connection goes to, not the name asked for)"

/** Whether NetworkPolicy can express the rule. */
export const expressible = (rule: EgressRule): boolean => rule._tag === "Cidr"

/** The session's egress NetworkPolicy. */
export const egressNetworkPolicy = (meta: Meta, sessionId: string, policy: EgressPolicy): V1NetworkPolicy => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "NetworkPolicy",
  metadata: { name: meta.name, labels: { ...meta.labels }, annotations: { ...meta.annotations } },
  spec: {
    podSelector: { matchLabels: { [SESSION_LABEL]: sessionId } },
    policyTypes: ["Egress"],
    egress: policy._tag === "DenyAll"
      ? []
      : [{ to: cidrBlocks(policy).map((cidr) => ({ ipBlock: { cidr } })) }]
  }
})
