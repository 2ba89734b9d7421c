/**
 * The `SandboxTemplate` (extensions.agents.x-k8s.io/v1alpha1) whose Sandboxes run the server the
 * options describe, for the cluster operator to apply and `warmPoolTemplate` to name: the pod
 * mode's pod template, its workspace a volumeClaimTemplate. Its pod holds the digest of a key
 * nobody has, so a Sandbox made from it serves no one until a claim's env gives it a session's:
 * the template lets claims override its env (`envVarsInjectionPolicy`, default Disallowed, under
 * which every claim of ours is refused with EnvVarsInjectionRejected).
 */
import { Effect } from "effect"
import { workspaceClaim } from "../../engines/kubernetes/manifests.ts"
import { podTemplate, SERVER_PORT, WORKSPACE_VOLUME } from "../../engines/kubernetes/podSpec.ts"
import { runtimeImage } from "../../engines/kubernetes/runtimeImage.ts"
import type { HostedLayerError } from "../../hosted/hostedRuntime.ts"
import { DEFAULT_SANDBOX_UID, DEFAULT_SANDBOX_USERNAME } from "../../runtimeImage/sandboxUser.ts"
import { sandboxConfigOr } from "../../schema/SandboxConfig.ts"
import { VSCODE_PORT } from "../../serverStart/serverTools.ts"
import { checkKubernetesOptions, type KubeManifest, type KubernetesRuntimeOptions } from "./options.ts"

/** Public IPv4 and IPv6: the controller's default egress, which blocks the cluster's and the cloud's own ranges. */
const PUBLIC_EGRESS = [{
  to: [
    { ipBlock: { cidr: "0.0.0.0/0", except: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16"] } },
    { ipBlock: { cidr: "::/0", except: ["fc00::/7", "fe80::/10"] } }
  ]
}]

/**
 * The template's NetworkPolicy. Without one the controller applies its default, which admits
 * traffic only from the sandbox router: a runtime connecting `direct` (to the pod IP, from a pod
 * of its own) would never reach the server. This one admits the server's port (and VS Code's) from
 * anywhere in the cluster, where the session key guards them, and keeps the default's egress.
 */
const templateNetworkPolicy = (vscode: boolean) => ({
  ingress: [{
    ports: [
      { protocol: "TCP", port: SERVER_PORT },
      ...(vscode ? [{ protocol: "TCP", port: VSCODE_PORT }] : [])
    ]
  }],
  egress: PUBLIC_EGRESS
})

export const sandboxTemplate = (
  name: string,
  options: KubernetesRuntimeOptions = {}
): Effect.Effect<KubeManifest, HostedLayerError> =>
  Effect.gen(function*() {
    yield* checkKubernetesOptions({ ...options, sessionId: name })
    const sandbox = yield* sandboxConfigOr(options.sandbox)
    const user = {
      name: options.user ?? DEFAULT_SANDBOX_USERNAME,
      id: options.userId ?? (options.user === undefined ? DEFAULT_SANDBOX_UID : 1000)
    }
    const image = yield* runtimeImage(options, sandbox, user, () => Effect.void)
    const labels = { ...options.labels }
    const annotations = { ...options.annotations }
    const template = podTemplate({
      sessionId: name,
      image,
      labels,
      annotations,
      claimName: undefined,
      keySha256: undefined,
      options,
      sandbox,
      user
    })
    return {
      apiVersion: "extensions.agents.x-k8s.io/v1alpha1",
      kind: "SandboxTemplate",
      metadata: { name, labels, annotations },
      spec: {
        podTemplate: template,
        volumeClaimTemplates: [workspaceClaim({ name: WORKSPACE_VOLUME, labels, annotations }, options)],
        // The claim's env overrides the template's locked digest: `Allowed` adds only new names.
        envVarsInjectionPolicy: "Overrides",
        networkPolicy: templateNetworkPolicy(options.vscode === true)
      }
    }
  })
