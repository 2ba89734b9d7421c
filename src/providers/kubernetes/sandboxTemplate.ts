/**
 * The `SandboxTemplate` (extensions.agents.x-k8s.io/v1alpha1) whose Sandboxes run the server the
 * options describe, for the cluster operator to apply and `warmPoolTemplate` to name: the pod
 * mode's pod template, its workspace a volumeClaimTemplate. Its pod holds the digest of a key
 * nobody has, so a Sandbox made from it serves no one until a claim's env gives it a session's.
 */
import { Effect } from "effect"
import { workspaceClaim } from "../../engines/kubernetes/manifests.ts"
import { podTemplate, WORKSPACE_VOLUME } from "../../engines/kubernetes/podSpec.ts"
import { runtimeImage } from "../../engines/kubernetes/runtimeImage.ts"
import type { HostedLayerError } from "../../hosted/hostedRuntime.ts"
import { DEFAULT_SANDBOX_UID, DEFAULT_SANDBOX_USERNAME } from "../../runtimeImage/sandboxUser.ts"
import { sandboxConfigOr } from "../../schema/SandboxConfig.ts"
import { checkKubernetesOptions, type KubeManifest, type KubernetesRuntimeOptions } from "./options.ts"

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
        volumeClaimTemplates: [workspaceClaim({ name: WORKSPACE_VOLUME, labels, annotations }, options)]
      }
    }
  })
