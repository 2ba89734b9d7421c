/**
 * What marks everything a KubernetesRuntime makes (pod, services, ingress, key Secret, PVC): a
 * label selector finds a session's objects (release, attach, tests) and an owner's (the reaper,
 * which acts only on `OWNER_LABEL`: the owner's heartbeat Lease, ownerLease.ts, since a pid means
 * nothing in a cluster). Free of client-node, so the runtime's module loads without it.
 */

/** On every object a runtime manages (and on its owner's Lease): what the reaper may look at. */
export const MANAGED_LABEL = "effect-sandbox.managed"
/** On every owned object: the name of its owner's Lease. Kept-alive objects carry none and are never reaped. */
export const OWNER_LABEL = "effect-sandbox.owner"
/** On a PVC the reaper may delete with its owner's sandbox (workspaces are kept by default). */
export const DELETE_WORKSPACE_LABEL = "effect-sandbox.delete-workspace"
/**
 * On a session's key Secret when the session has an egress NetworkPolicy (the `network` option):
 * a release after attach deletes the policy only then, so a Role without `networkpolicies` still
 * releases sessions that never asked for one.
 */
export const EGRESS_POLICY_LABEL = "effect-sandbox.egress-policy"
/** The session id, on each of a session's objects. */
export const SESSION_LABEL = "effect-sandbox.session"

/**
 * The labels of a session's objects: the user's first, ours over them (they are how objects are
 * found), with the owner's (`MANAGED_LABEL`, `OWNER_LABEL`: its Lease's `labels`) unless kept alive.
 */
export const sessionLabels = (input: {
  readonly sessionId: string
  readonly owner?: Readonly<Record<string, string>> | undefined
  readonly extra?: Readonly<Record<string, string>> | undefined
}): Record<string, string> => ({
  ...input.extra,
  ...input.owner,
  [MANAGED_LABEL]: "true",
  [SESSION_LABEL]: input.sessionId
})

/** The label selector of one session's objects. */
export const sessionSelector = (sessionId: string): string => `${MANAGED_LABEL}=true,${SESSION_LABEL}=${sessionId}`

/** The names of a session's objects, after OpenHands' (`<pod>-pvc`, `<pod>-svc`, ...). */
export const resourceNames = (sessionId: string) => {
  const pod = `effect-sandbox-${sessionId}`
  return {
    pod,
    pvc: `${pod}-pvc`,
    service: `${pod}-svc`,
    ingress: `${pod}-ingress`,
    keySecret: `${pod}-key`,
    /** The `network` option's NetworkPolicy (egressPolicy.ts). */
    networkPolicy: `${pod}-egress`
  }
}

export type ResourceNames = ReturnType<typeof resourceNames>
