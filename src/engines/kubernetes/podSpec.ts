/**
 * The pod template of a session: the runtime image running the action server (its command line
 * from server/commandLine.ts, as DockerRuntime's), the workspace PVC at /workspace, the readiness
 * probe on `/alive`, VS Code's `VSCODE_PORT` and port only with `vscode: true`, OpenHands'
 * resources and scheduling options, and a security context that keeps the sandbox user
 * unprivileged unless `privileged` is asked for. A function of its own so that a bare pod and an
 * agent-sandbox `Sandbox` (its `podTemplate`) run the very same thing.
 */
import type { V1Container, V1PodTemplateSpec } from "@kubernetes/client-node"
import { createHash, randomBytes } from "node:crypto"
import { SESSION_KEY_SHA256_VARIABLE } from "../../executor/childEnv.ts"
import { restrictsToWorkspace } from "../../runtime/options.ts"
import type { SandboxConfig } from "../../schema/SandboxConfig.ts"
import { pluginsIn, sandboxServerEnv, serverCommand } from "../../server/commandLine.ts"
import { VSCODE_PORT, vscodeEnv } from "../../serverStart/serverTools.ts"
import type { PodOptions } from "./podOptions.ts"

/** The action server's port in the pod (OpenHands' 8080). */
export const SERVER_PORT = 8080
export const WORKSPACE = "/workspace"
const NODE = "/opt/effect-sandbox/bin/node"
const SERVER = "/opt/effect-sandbox/payload/server.mjs"
/** The workspace volume's name; a Sandbox's volumeClaimTemplate of this name makes its PVC `workspace-<sandbox>`. */
export const WORKSPACE_VOLUME = "workspace"

/** What one session's pod is made of beyond the options. */
export interface PodInput {
  readonly sessionId: string
  readonly image: string
  /** Labels and annotations (labels.ts) the pod carries. */
  readonly labels: Readonly<Record<string, string>>
  readonly annotations: Readonly<Record<string, string>>
  /** The workspace PVC's name; undefined when a Sandbox's `volumeClaimTemplates` adds the volume. */
  readonly claimName: string | undefined
  /**
   * The SHA-256 (hex) of the session key: all the server needs to check keys (server/sessionKey.ts).
   * Undefined for a SandboxTemplate's pod, whose session key does not exist yet: `lockedDigest`.
   */
  readonly keySha256: string | undefined
  readonly options: PodOptions
  readonly sandbox: SandboxConfig
  /** The sandbox user the server runs as (its uid is the pod's `runAsUser`, `runAsGroup` and `fsGroup`). */
  readonly user: { readonly name: string; readonly id: number }
}

/**
 * The digest of a key nobody has (random, thrown away): a template's pod never serves an open
 * server. A claim appends the session's own digest to the env, and the last entry of a name wins.
 */
const lockedDigest = () => createHash("sha256").update(randomBytes(32)).digest("hex")

/**
 * OpenHands' KubernetesConfig defaults (requests cpu 1 and memory 1Gi, a memory limit of 2Gi) and a
 * CPU limit of 2, or `cpus` requested and as the limit and `memoryMiB` as the limit (half of it
 * requested); `resources` over both. Every pod carries both limits: a namespace whose ResourceQuota
 * counts `limits.cpu` or `limits.memory` refuses a pod without them.
 */
const resourcesOf = (options: PodOptions) => ({
  requests: {
    cpu: String(options.cpus ?? 1),
    memory: options.memoryMiB === undefined ? "1Gi" : `${Math.round(options.memoryMiB / 2)}Mi`,
    ...options.resources?.requests
  },
  limits: {
    cpu: String(options.cpus ?? 2),
    memory: options.memoryMiB === undefined ? "2Gi" : `${options.memoryMiB}Mi`,
    ...options.resources?.limits
  }
})

/**
 * The pod's security context: the sandbox user's uid and group (a fresh PVC is root's: the group
 * the sandbox user is in may write it) and the runtime's default seccomp profile, which Pod
 * Security `restricted` asks of every pod.
 */
const podSecurity = (uid: number) => ({
  runAsUser: uid,
  runAsGroup: uid,
  fsGroup: uid,
  seccompProfile: { type: "RuntimeDefault" }
})

/**
 * The server container's: unprivileged, no privilege gained through set-uid files, no capability,
 * and `runAsNonRoot` unless the sandbox user is root (which only `baseline` namespaces take): all
 * that `restricted` asks of a container. Set on the container, not the pod, so that a container
 * given its own user (the runtime API's given command) is judged by its own context.
 */
const containerSecurity = (options: PodOptions, uid: number) =>
  options.privileged === true
    ? { privileged: true }
    : {
      privileged: false,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
      ...(uid === 0 ? {} : { runAsNonRoot: true })
    }

/** The pod's metadata and spec (for a bare pod, or a Sandbox's `podTemplate`). */
export const podTemplate = (input: PodInput): V1PodTemplateSpec => {
  const { options, sandbox } = input
  const uid = input.user.id
  const env = sandboxServerEnv(sandbox, options, input.sessionId, {
    [SESSION_KEY_SHA256_VARIABLE]: input.keySha256 ?? lockedDigest(),
    ...(options.pidsLimit === undefined ? {} : { EFFECT_SANDBOX_PIDS_LIMIT: String(options.pidsLimit) }),
    ...vscodeEnv(options)
  })
  return {
    metadata: { labels: { ...input.labels }, annotations: { ...input.annotations } },
    spec: {
      // OpenHands' Never: a crashed server is a disconnect the owner sees, not a silent restart.
      restartPolicy: "Never",
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      securityContext: podSecurity(uid),
      ...(options.runtimeClassName === undefined ? {} : { runtimeClassName: options.runtimeClassName }),
      ...(options.nodeSelector === undefined ? {} : { nodeSelector: { ...options.nodeSelector } }),
      ...(options.tolerations === undefined ? {} : { tolerations: options.tolerations.map((t) => ({ ...t })) }),
      ...(options.imagePullSecret === undefined ? {} : { imagePullSecrets: [{ name: options.imagePullSecret }] }),
      containers: [{
        name: "runtime",
        image: input.image,
        command: serverCommand({
          node: NODE,
          entry: SERVER,
          port: SERVER_PORT,
          workingDir: WORKSPACE,
          // Reached from outside its network namespace (with the key).
          host: "0.0.0.0",
          username: input.user.name,
          userId: uid,
          tools: options,
          restrictToWorkspace: restrictsToWorkspace(options)
        }),
        workingDir: WORKSPACE,
        env: Object.entries(env).map(([name, value]) => ({ name, value })),
        // Named as OpenHands names them; the owner reaches both through its local endpoints (reach.ts).
        ports: [
          { name: "http", containerPort: SERVER_PORT },
          ...(options.vscode === true ? [{ name: "vscode", containerPort: VSCODE_PORT }] : [])
        ],
        resources: resourcesOf(options),
        securityContext: containerSecurity(options, uid),
        readinessProbe: {
          httpGet: { path: "/alive", port: SERVER_PORT },
          periodSeconds: 1,
          timeoutSeconds: 5,
          failureThreshold: 3
        },
        volumeMounts: [{ name: WORKSPACE_VOLUME, mountPath: WORKSPACE }]
      }],
      ...(input.claimName === undefined
        ? {}
        : { volumes: [{ name: WORKSPACE_VOLUME, persistentVolumeClaim: { claimName: input.claimName } }] })
    }
  }
}

/** The value a container's variable `name` has: its last entry (the kubelet's rule), undefined without one. */
export const envValue = (container: V1Container | undefined, name: string): string | undefined =>
  (container?.env ?? []).filter((variable) => variable.name === name).at(-1)?.value

/**
 * Does this container run the `vscode` plugin where the owner dials it: `vscode` among the
 * server's `--plugins` and `VSCODE_PORT` at 8001? What `podTemplate` writes with `vscode: true`;
 * asked of a claimed Sandbox's pod, which the operator's SandboxTemplate made, not the options.
 */
export const runsVsCode = (container: V1Container | undefined): boolean =>
  pluginsIn([...(container?.command ?? []), ...(container?.args ?? [])]).includes("vscode") &&
  envValue(container, "VSCODE_PORT") === String(VSCODE_PORT)
