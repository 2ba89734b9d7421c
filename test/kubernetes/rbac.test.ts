/**
 * The Role of docs/runtimes/kubernetes.md is all the runtime needs: the stand-in authorizes every
 * request by that Role's rules (standin/rbac.ts reads them from the docs, so the docs and the
 * runtime cannot drift apart), and a session's whole life runs under it: in pod mode with an
 * ingress (start, the reaper's pass, commands through the port-forward, pause and resume, a kept
 * session attached by id and released), and in agentSandbox mode. A call the Role lacks fails the
 * start with the apiserver's 403 naming the verb and resource.
 */
import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { CmdOutputObservation, CmdRunAction, RuntimeStartError, SandboxConfig } from "../../src/index.ts"
import { KubernetesRuntime } from "../../src/kubernetes.ts"
import { buildRuntime } from "../docker/helpers.ts"
import { describeDocker } from "../docker/infra.ts"
import { assertNothingLeft, sessionIdOf, standInLayer, useStandIn } from "./helpers.ts"
import { kubeConfigOf } from "./lifecycle.ts"
import { docsRole } from "./standin/rbac.ts"
import { standIn } from "./standin/server.ts"

/** Run `echo text`: its output is `text`. */
const echo = (rt: { readonly run: (action: CmdRunAction) => Effect.Effect<unknown, unknown> }, text: string) =>
  Effect.gen(function*() {
    const out = yield* rt.run(new CmdRunAction({ command: `echo ${text}` }))
    assert.instanceOf(out, CmdOutputObservation)
    assert.strictEqual(out.content.trim(), text)
  })

describeDocker("KubernetesRuntime under the docs' Role (stand-in RBAC)", () => {
  const cluster = useStandIn({ rbac: docsRole() })

  it.live("pod mode: start, commands, pause and resume, attach, release", () =>
    Effect.gen(function*() {
      const sessionId = sessionIdOf("rbac")
      const first = yield* buildRuntime(standInLayer(cluster, {
        sessionId,
        ingressDomain: "sandboxes.example.test",
        sandbox: new SandboxConfig({ keepRuntimeAlive: true })
      }))
      yield* echo(first.rt, "started")
      yield* first.rt.pause
      yield* first.rt.resume
      yield* echo(first.rt, "resumed")
      yield* first.release
      const attached = yield* buildRuntime(
        KubernetesRuntime.attach(sessionId, { kubeConfig: cluster.kubeConfig, deleteWorkspace: true })
      )
      yield* echo(attached.rt, "attached")
      yield* attached.release
      yield* assertNothingLeft(cluster, sessionId)
    }), 240_000)

  it.live("agentSandbox mode: start, commands, release", () =>
    Effect.gen(function*() {
      const sessionId = sessionIdOf("rbas")
      const { rt, release } = yield* buildRuntime(
        standInLayer(cluster, { sessionId, mode: "agentSandbox", deleteWorkspace: true })
      )
      yield* echo(rt, "sandboxed")
      yield* release
      yield* assertNothingLeft(cluster, sessionId)
    }), 240_000)

  it.live(
    "a Role without the Lease's verbs fails the start with the apiserver's 403",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const rules = docsRole().filter((rule) => !rule.resources.includes("leases"))
        const strict = yield* standIn({ rbac: rules })
        const error = yield* Effect.flip(
          buildRuntime(standInLayer({ kubeConfig: kubeConfigOf(strict.kubeconfigPath), image: cluster.image }))
        )
        assert.instanceOf(error, RuntimeStartError)
        assert.match(
          error.message,
          /^Cannot create the owner lease in namespace default \(.*\): create lease effect-sandbox-owner-[0-9a-f]+: leases\.coordination\.k8s\.io is forbidden: User "system:serviceaccount:agents:effect-sandbox" cannot create resource "leases" in API group "coordination\.k8s\.io" in the namespace "default"$/
        )
        assert.strictEqual(error.provider?.reason, "forbidden")
      })),
    60_000
  )
})
