/**
 * KubernetesRuntime in agentSandbox mode, on the stand-in: a session is a `Sandbox` of its own
 * (commands run, the workspace PVC from its volumeClaimTemplate survives pause and resume, release
 * leaves only that PVC), or a `SandboxClaim` on a SandboxTemplate written by
 * `KubernetesRuntime.sandboxTemplate` (made anew with the key's digest in its env; a warm pool's
 * pod, which cannot check the session's key, is refused); `auto` takes bare pods on a cluster
 * without the CRDs; a missing template and a cluster without the CRDs fail with typed errors.
 */
import { assert, it } from "@effect/vitest"
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node"
import { Effect } from "effect"
import { CmdOutputObservation, CmdRunAction, RuntimeStartError } from "../../src/index.ts"
import { KubernetesRuntime } from "../../src/kubernetes.ts"
import { buildRuntime } from "../docker/helpers.ts"
import { describeDocker } from "../docker/infra.ts"
import {
  assertEngineClean,
  namespace,
  noObjects,
  sessionIdOf,
  sessionObjects,
  standInLayer,
  useStandIn
} from "./helpers.ts"
import { eventually, extensionObject, kubeConfigOf, warmPoolReady } from "./lifecycle.ts"
import { standIn } from "./standin/server.ts"

const extensions = { group: "extensions.agents.x-k8s.io", version: "v1alpha1", namespace }
const sandboxes = { group: "agents.x-k8s.io", version: "v1alpha1", namespace }

const names = (list: { items: Array<{ metadata: { name: string } }> }) => list.items.map((i) => i.metadata.name)

/** The Sandboxes and SandboxClaims carrying the session's label. */
const agentObjects = (kc: KubeConfig, sessionId: string) =>
  Effect.promise(async () => {
    const custom = kc.makeApiClient(CustomObjectsApi)
    const labelSelector = `effect-sandbox.session=${sessionId}`
    return {
      sandboxes: names(await custom.listNamespacedCustomObject({ ...sandboxes, plural: "sandboxes", labelSelector })),
      claims: names(await custom.listNamespacedCustomObject({ ...extensions, plural: "sandboxclaims", labelSelector }))
    }
  })

const output = (observation: unknown) => {
  assert.instanceOf(observation, CmdOutputObservation)
  return observation
}

const deletePvc = (kc: KubeConfig, name: string) =>
  Effect.promise(() => kc.makeApiClient(CoreV1Api).deleteNamespacedPersistentVolumeClaim({ name, namespace }))

describeDocker("KubernetesRuntime agentSandbox mode (stand-in)", () => {
  const cluster = useStandIn()

  it.live(
    "a Sandbox of its own runs commands, keeps the workspace across pause and resume, and leaves only its PVC",
    () =>
      Effect.gen(function*() {
        const sessionId = sessionIdOf("as")
        const name = `effect-sandbox-${sessionId}`
        const { rt, release } = yield* buildRuntime(standInLayer(cluster, { sessionId, mode: "agentSandbox" }))
        const run = (command: string) => rt.run(new CmdRunAction({ command })).pipe(Effect.map(output))
        const first = yield* run("echo kept > /workspace/note.txt && export MOOD=set && echo written")
        assert.strictEqual(first.content.trim(), "written")
        assert.strictEqual(first.exitCode, 0)
        assert.deepStrictEqual(yield* agentObjects(cluster.kubeConfig, sessionId), { sandboxes: [name], claims: [] })
        // Expiring on the cluster's side one lease term (60 s) ahead, pushed on by the owner's heartbeat.
        const made: { spec: { shutdownTime: string; shutdownPolicy: string } } = yield* Effect.promise(() =>
          cluster.kubeConfig.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
            ...sandboxes,
            plural: "sandboxes",
            name
          })
        )
        assert.strictEqual(made.spec.shutdownPolicy, "Delete")
        const ahead = Date.parse(made.spec.shutdownTime) - Date.now()
        assert.isTrue(ahead > 0 && ahead <= 60_000, `shutdownTime ${made.spec.shutdownTime} is not within a term ahead`)
        // The pod is the Sandbox's (named after it), labelled as a session's; the workspace its volumeClaimTemplate's.
        assert.deepStrictEqual(yield* sessionObjects(cluster.kubeConfig, sessionId), {
          ...noObjects,
          pods: [name],
          services: [`${name}-svc`],
          secrets: [`${name}-key`],
          claims: [`workspace-${name}`]
        })

        yield* rt.pause
        assert.strictEqual(yield* rt.currentStatus, "PAUSED")
        assert.deepStrictEqual((yield* sessionObjects(cluster.kubeConfig, sessionId)).pods, [])
        yield* rt.resume
        assert.strictEqual(yield* rt.currentStatus, "READY")
        const after = yield* run("cat /workspace/note.txt; echo \"mood=${MOOD:-unset}\"")
        assert.strictEqual(after.content.trim(), "kept\nmood=unset")

        yield* release
        assert.deepStrictEqual(yield* agentObjects(cluster.kubeConfig, sessionId), { sandboxes: [], claims: [] })
        assert.deepStrictEqual(yield* sessionObjects(cluster.kubeConfig, sessionId), {
          ...noObjects,
          claims: [`workspace-${name}`]
        })
        yield* assertEngineClean(cluster.standIn, false)
        yield* deletePvc(cluster.kubeConfig, `workspace-${name}`)
        yield* assertEngineClean(cluster.standIn)
      }),
    240_000
  )

  it.live(
    "claims from a SandboxTemplate with the key's digest (made anew even from a warm pool); a template that refuses env, or a missing one, fails at once",
    () =>
      Effect.gen(function*() {
        const kc = cluster.kubeConfig
        const custom = kc.makeApiClient(CustomObjectsApi)
        const template = yield* KubernetesRuntime.sandboxTemplate("tpl", { baseImage: cluster.image })
        // Claims may override its env (the key's digest), and `direct` reaches the server: the
        // controller's default NetworkPolicy would admit only the sandbox router.
        assert.strictEqual(template.spec["envVarsInjectionPolicy"], "Overrides")
        assert.deepStrictEqual(
          (template.spec["networkPolicy"] as { ingress: unknown }).ingress,
          [{ ports: [{ protocol: "TCP", port: 8080 }] }]
        )
        yield* extensionObject(kc, "sandboxtemplates", template)
        const claimed = (options: { sessionId: string; warmPool?: string; template?: string }) =>
          standInLayer(cluster, {
            sessionId: options.sessionId,
            warmPoolTemplate: options.template ?? "tpl",
            deleteWorkspace: true,
            ...(options.warmPool === undefined ? {} : { warmPool: options.warmPool })
          })

        // Made anew from the template (warmPool "none"): the claim carries the owner labels, the pod our digest.
        const sessionId = sessionIdOf("cl")
        const name = `effect-sandbox-${sessionId}`
        const { rt, release } = yield* buildRuntime(claimed({ sessionId }))
        const echoed = output(yield* rt.run(new CmdRunAction({ command: "echo from-the-claim" })))
        assert.strictEqual(echoed.content.trim(), "from-the-claim")
        const claim: { metadata: { labels: Record<string, string> } } = yield* Effect.promise(() =>
          custom.getNamespacedCustomObject({ ...extensions, plural: "sandboxclaims", name })
        )
        assert.match(claim.metadata.labels["effect-sandbox.owner"]!, /^effect-sandbox-owner-[0-9a-f]{10}$/)
        assert.deepStrictEqual(yield* agentObjects(kc, sessionId), { sandboxes: [], claims: [name] })
        yield* release
        assert.deepStrictEqual(yield* agentObjects(kc, sessionId), { sandboxes: [], claims: [] })
        assert.deepStrictEqual(yield* sessionObjects(kc, sessionId), noObjects)

        // A warm pool of the same template: a claim that sets env is made anew (a warm pod's env is
        // fixed), so the session gets a Sandbox named after its claim, never the pool's.
        yield* extensionObject(kc, "sandboxwarmpools", {
          metadata: { name: "pool" },
          spec: { replicas: 1, sandboxTemplateRef: { name: "tpl" } }
        })
        const warm = yield* warmPoolReady(kc, "pool", 120_000)
        assert.isTrue(warm, "the warm pool never had a ready Sandbox")
        const pooledId = sessionIdOf("wp")
        const pooled = yield* buildRuntime(claimed({ sessionId: pooledId, warmPool: "pool" }))
        assert.strictEqual(
          output(yield* pooled.rt.run(new CmdRunAction({ command: "echo cold" }))).content.trim(),
          "cold"
        )
        const boundTo: { status: { sandbox: { name: string } } } = yield* Effect.promise(() =>
          custom.getNamespacedCustomObject({
            ...extensions,
            plural: "sandboxclaims",
            name: `effect-sandbox-${pooledId}`
          })
        )
        assert.strictEqual(boundTo.status.sandbox.name, `effect-sandbox-${pooledId}`)
        yield* pooled.release
        assert.deepStrictEqual(yield* agentObjects(kc, pooledId), { sandboxes: [], claims: [] })

        // A template without envVarsInjectionPolicy (Disallowed) refuses the claim's env: a typed
        // refusal at once, not the bind time-out.
        yield* extensionObject(kc, "sandboxtemplates", {
          ...template,
          metadata: { ...template.metadata, name: "tpl-noenv" },
          spec: { ...template.spec, envVarsInjectionPolicy: undefined }
        })
        const rejectedId = sessionIdOf("ev")
        const rejected = yield* Effect.flip(buildRuntime(claimed({ sessionId: rejectedId, template: "tpl-noenv" })))
        assert.instanceOf(rejected, RuntimeStartError)
        assert.strictEqual(
          rejected.message,
          `SandboxClaim default/effect-sandbox-${rejectedId} cannot be bound: EnvVarsInjectionRejected: environment variable injection rejected: environment variable injection is not allowed by the template policy`
        )
        assert.strictEqual(rejected.provider?.reason, "forbidden")
        assert.deepStrictEqual(yield* agentObjects(kc, rejectedId), { sandboxes: [], claims: [] })

        const missing = yield* Effect.flip(buildRuntime(claimed({ sessionId: sessionIdOf("nt"), template: "nope" })))
        assert.instanceOf(missing, RuntimeStartError)
        assert.strictEqual(missing.provider?.reason, "not-found")
        assert.match(
          missing.message,
          /^SandboxClaim default\/effect-sandbox-nt-[0-9a-f]{8} cannot be bound: TemplateNotFound: SandboxTemplate "nope" not found$/
        )
      }).pipe(
        Effect.scoped,
        // The warm pool's Sandboxes went with it; their volumeClaimTemplate PVCs stay, as on a cluster.
        Effect.andThen(Effect.promise(async () => {
          const core = cluster.kubeConfig.makeApiClient(CoreV1Api)
          for (const pvc of (await core.listNamespacedPersistentVolumeClaim({ namespace })).items) {
            await core.deleteNamespacedPersistentVolumeClaim({ name: pvc.metadata!.name!, namespace })
          }
        })),
        Effect.andThen(Effect.gen(function*() {
          const podsGone = yield* eventually(async () =>
            (await cluster.kubeConfig.makeApiClient(CoreV1Api).listNamespacedPod({ namespace })).items.length === 0
          )
          assert.isTrue(podsGone, "pods left behind")
          yield* assertEngineClean(cluster.standIn)
        }))
      ),
    300_000
  )

  it.live(
    "auto takes bare pods on a cluster without the CRDs, where agentSandbox fails saying why; one serving them at v1beta1 only is named",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const plain = yield* standIn({ agentSandbox: false })
        const kubeConfig = kubeConfigOf(plain.kubeconfigPath)
        const onPlain = { kubeConfig, image: cluster.image }
        const refused = yield* Effect.flip(buildRuntime(standInLayer(onPlain, { mode: "agentSandbox" })))
        assert.instanceOf(refused, RuntimeStartError)
        assert.strictEqual(
          refused.message,
          "The cluster does not serve agents.x-k8s.io/v1alpha1 Sandboxes, which mode agentSandbox needs: install agent-sandbox (kubernetes-sigs/agent-sandbox) or use mode \"pod\""
        )

        // A cluster serving agent-sandbox at v1beta1 only has it installed: auto says so, never bare pods in silence.
        const beta = yield* standIn({ agentSandboxVersion: "v1beta1" })
        const onBeta = { kubeConfig: kubeConfigOf(beta.kubeconfigPath), image: cluster.image }
        const betaOnly = yield* Effect.flip(buildRuntime(standInLayer(onBeta, { mode: "auto" })))
        assert.instanceOf(betaOnly, RuntimeStartError)
        assert.strictEqual(
          betaOnly.message,
          "The cluster serves agent-sandbox at v1beta1 but not agents.x-k8s.io/v1alpha1 Sandboxes, which mode auto needs: serve v1alpha1 beside v1beta1, or use mode \"pod\""
        )

        const sessionId = sessionIdOf("auto")
        const name = `effect-sandbox-${sessionId}`
        const { rt, release } = yield* buildRuntime(
          standInLayer(onPlain, { sessionId, mode: "auto", deleteWorkspace: true })
        )
        assert.strictEqual(output(yield* rt.runCommand("echo bare")).content.trim(), "bare")
        assert.deepStrictEqual(yield* sessionObjects(kubeConfig, sessionId), {
          ...noObjects,
          pods: [name],
          services: [`${name}-svc`],
          secrets: [`${name}-key`],
          claims: [`${name}-pvc`]
        })
        yield* release
        assert.deepStrictEqual(yield* sessionObjects(kubeConfig, sessionId), noObjects)
        yield* assertEngineClean(plain)
      })),
    180_000
  )
})
