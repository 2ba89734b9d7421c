/**
 * The pod of a runtime API sandbox on Kubernetes, and what its state means to §14's clients.
 *
 * The pod is KubernetesRuntime's (kubernetes/podSpec.ts: the workspace PVC, the `/alive` readiness
 * probe, the unprivileged sandbox user) with the request's part: without `command`, our action
 * server on podSpec's port with the key's digest only; with one, exactly that command on port
 * 60000 as the image's own user (as the Docker backend runs it), the key as `SESSION_API_KEY` from
 * the sandbox's Secret, where OpenHands' server reads it, and VS Code's port when the command asks
 * for the plugin and the API serves it (vscodePlugin.ts). Either way the app ports are declared
 * so that the service and the proxy can reach them.
 */
import type { V1EnvVar, V1Pod, V1PodTemplateSpec } from "@kubernetes/client-node"
import { KEY_FIELD } from "../engines/kubernetes/manifests.ts"
import type { PodOptions } from "../engines/kubernetes/podOptions.ts"
import { podTemplate, SERVER_PORT } from "../engines/kubernetes/podSpec.ts"
import { hasEnded, isReady, podTrouble } from "../engines/kubernetes/startErrors.ts"
import { ROOT_CAPABILITIES } from "../runtimeImage/capabilities.ts"
import type { SandboxConfig } from "../schema/SandboxConfig.ts"
import { type PodState, SANDBOX_APP_PORTS, SANDBOX_SERVER_PORT, type SessionStatus } from "./sandboxes.ts"
import type { StartRequest } from "./schemas.ts"
import { VSCODE_PORT, withVsCodePort } from "./vscodePlugin.ts"

export interface SandboxPodInput {
  readonly request: StartRequest
  readonly image: string
  readonly labels: Readonly<Record<string, string>>
  readonly claimName: string
  /** The sandbox's Secret, holding the key under `KEY_FIELD`. */
  readonly keySecret: string
  readonly keySha256: string
  readonly options: PodOptions
  /** The sandbox user our server runs as (a given command runs as the image's own). */
  readonly user: { readonly name: string; readonly id: number }
  readonly sandbox: SandboxConfig
  /** The sandbox gets VS Code (vscodePlugin.ts): `VSCODE_PORT` set and the port declared. */
  readonly vscode: boolean
}

/** The pod template of a sandbox and the port its action server listens on. */
export const sandboxPod = (input: SandboxPodInput): { template: V1PodTemplateSpec; serverPort: number } => {
  const { request } = input
  const environment = withVsCodePort(request.environment ?? {}, input.vscode)
  const base = podTemplate({
    sessionId: request.session_id,
    image: input.image,
    labels: input.labels,
    annotations: {},
    claimName: input.claimName,
    keySha256: input.keySha256,
    options: { ...input.options, env: { ...input.options.env, ...environment } },
    sandbox: input.sandbox,
    user: input.user
  })
  const spec = base.spec!
  const container = spec.containers[0]!
  const appPorts = SANDBOX_APP_PORTS.map((port) => ({ name: `app-${port}`, containerPort: port }))
  if (request.command === undefined) {
    const ours = { ...container, ports: [...container.ports ?? [], ...appPorts] }
    if (request.working_dir !== undefined) ours.workingDir = request.working_dir
    return { template: { ...base, spec: { ...spec, containers: [ours] } }, serverPort: SERVER_PORT }
  }
  const env: Array<V1EnvVar> = [
    ...Object.entries(withVsCodePort({ ...input.sandbox.runtimeStartupEnvVars, ...environment }, input.vscode))
      .filter(([name]) => name !== "SESSION_API_KEY")
      .map(([name, value]) => ({ name, value })),
    { name: "SESSION_API_KEY", valueFrom: { secretKeyRef: { name: input.keySecret, key: KEY_FIELD } } }
  ]
  const { runAsUser: _user, runAsGroup: _group, ...podSecurity } = spec.securityContext ?? {}
  const { workingDir: _dir, ...rest } = container
  const given = {
    ...rest,
    command: [...request.command],
    env,
    ...(request.working_dir === undefined ? {} : { workingDir: request.working_dir }),
    ports: [
      { name: "http", containerPort: SANDBOX_SERVER_PORT },
      ...appPorts,
      ...(input.vscode ? [{ name: "vscode", containerPort: VSCODE_PORT }] : [])
    ],
    readinessProbe: { ...container.readinessProbe, httpGet: { path: "/alive", port: SANDBOX_SERVER_PORT } },
    // The image's own user, which may need to switch users (OpenHands' server does): the capabilities
    // a root command needs and no more (no NET_RAW, no NET_ADMIN), as the Docker backend gives it;
    // no privilege gained through set-uid files.
    securityContext: {
      privileged: false,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"], add: [...ROOT_CAPABILITIES] }
    }
  }
  return {
    template: { ...base, spec: { ...spec, securityContext: podSecurity, containers: [given] } },
    serverPort: SANDBOX_SERVER_PORT
  }
}

/** The session's status: paused while its pod is deleted on purpose, stopped once the pod ended or vanished. */
export const sessionStatusOf = (pod: V1Pod | undefined, paused: boolean): SessionStatus =>
  paused
    ? "paused"
    : pod === undefined || hasEnded(pod) || pod.metadata?.deletionTimestamp !== undefined
    ? "stopped"
    : "running"

/** `/runtime/{id}`'s view of the pod: §14's `pod_status` words for Kubernetes' phases and reasons. */
export const podStateOf = (pod: V1Pod | undefined, paused: boolean): PodState => {
  const restartCount = pod?.status?.containerStatuses?.[0]?.restartCount ?? 0
  if (paused) return { podStatus: "paused", restartCount, restartReasons: [] }
  if (pod === undefined) return { podStatus: "failed", restartCount, restartReasons: ["the pod is gone (deleted)"] }
  const trouble = podTrouble(pod)
  if (pod.status?.containerStatuses?.[0]?.state?.waiting?.reason === "CrashLoopBackOff") {
    return { podStatus: "crashloopbackoff", restartCount, restartReasons: [trouble ?? "CrashLoopBackOff"] }
  }
  if (trouble !== undefined) return { podStatus: "failed", restartCount, restartReasons: [trouble] }
  if (pod.metadata?.deletionTimestamp !== undefined) {
    return { podStatus: "failed", restartCount, restartReasons: ["the pod is being deleted"] }
  }
  if (pod.status?.phase === "Running") {
    return { podStatus: isReady(pod) ? "ready" : "running", restartCount, restartReasons: [] }
  }
  return {
    podStatus: pod.status?.phase === "Pending" || pod.status?.phase === undefined ? "pending" : "unknown",
    restartCount,
    restartReasons: []
  }
}
