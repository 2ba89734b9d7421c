/**
 * What marks everything a KubernetesRuntime makes (pod, services, ingress, key Secret, PVC): a
 * label selector finds a session's objects (release, attach, tests) and an owner's (the reaper,
 * which acts only on `owner`: the owner's heartbeat Lease, since a pid means nothing in a cluster).
 */
export const LABEL = {
  managed: "effect-sandbox.managed",
  session: "effect-sandbox.session",
  /** The name of the owner's Lease (absent when no owner is named). */
  owner: "effect-sandbox.owner"
} as const

/** The labels of a session's objects: the user's first, ours over them (they are how objects are found). */
export const sessionLabels = (input: {
  readonly sessionId: string
  readonly owner?: string | undefined
  readonly extra?: Readonly<Record<string, string>> | undefined
}): Record<string, string> => ({
  ...input.extra,
  [LABEL.managed]: "true",
  [LABEL.session]: input.sessionId,
  ...(input.owner === undefined ? {} : { [LABEL.owner]: input.owner })
})

/** The label selector of one session's objects. */
export const sessionSelector = (sessionId: string): string => `${LABEL.managed}=true,${LABEL.session}=${sessionId}`

/** The names of a session's objects, after OpenHands' (`<pod>-pvc`, `<pod>-svc`, ...). */
export const resourceNames = (sessionId: string) => {
  const pod = `effect-sandbox-${sessionId}`
  return { pod, pvc: `${pod}-pvc`, service: `${pod}-svc`, ingress: `${pod}-ingress`, keySecret: `${pod}-key` }
}

export type ResourceNames = ReturnType<typeof resourceNames>
