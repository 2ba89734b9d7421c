/**
 * The session key never enters the pod: its server gets only the key's SHA-256, and the key itself
 * lives in a Secret the pod does not mount (read back by `attach`). A command in the pod finds the
 * key nowhere: not in its environment, not in the server's (/proc/1/environ) or command line, not
 * in a file; the server still refuses a wrong key and takes the right one. `attach` by session id reaches the kept pod with the key from the Secret, and its
 * release leaves the pod running.
 */
import { assert, it } from "@effect/vitest"
import { CoreV1Api } from "@kubernetes/client-node"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { CmdRunAction, SandboxConfig } from "../../src/index.ts"
import { KubernetesRuntime } from "../../src/kubernetes.ts"
import { buildRuntime } from "../docker/helpers.ts"
import { describeDocker } from "../docker/infra.ts"
import { assertEngineClean, namespace, sessionObjects, standInLayer, useStandIn } from "./helpers.ts"

describeDocker("KubernetesRuntime session key (stand-in)", () => {
  const cluster = useStandIn()

  it.live("leaves no trace of the key in the pod; attach finds it in the Secret", () =>
    Effect.gen(function*() {
      const sessionId = `sk-${randomBytes(4).toString("hex")}`
      const pod = `effect-sandbox-${sessionId}`
      const started = yield* buildRuntime(
        standInLayer(cluster, {
          sessionId,
          deleteWorkspace: true,
          sandbox: new SandboxConfig({ keepRuntimeAlive: true })
        })
      )
      const core = cluster.kubeConfig.makeApiClient(CoreV1Api)
      const secret = yield* Effect.promise(() => core.readNamespacedSecret({ name: `${pod}-key`, namespace }))
      const key = Buffer.from(secret.data!["session-api-key"]!, "base64").toString("utf8")
      assert.lengthOf(key, 32)
      // The key is handed to the command in two halves, so that only the search itself holds it whole.
      const [a, b] = [key.slice(0, 16), key.slice(16)]
      const search = [
        `A=${a}; B=${b}; K="$A$B"`,
        `env | grep -cF -- "$K"`,
        `grep -cF -- "$K" /proc/1/environ /proc/1/cmdline`,
        `grep -rlF -- "$K" /tmp /workspace /home /run /etc /opt/effect-sandbox 2>/dev/null | wc -l`,
        // The digest the server checks against is not passed on to commands either.
        `env | grep -c EFFECT_SANDBOX_SESSION_API_KEY`
      ].join("; ")
      const found = yield* started.rt.run(new CmdRunAction({ command: search }))
      assert.strictEqual(found.content.trim(), ["0", "/proc/1/environ:0", "/proc/1/cmdline:0", "0", "0"].join("\n"))
      // The server checks keys against the digest: a wrong one is refused, the key accepted.
      const url = started.rt.info.urls["actionServer"]!
      const listFiles = (given: string) =>
        Effect.promise(() =>
          fetch(`${url}/list_files`, {
            method: "POST",
            headers: { "content-type": "application/json", "x-session-api-key": given },
            body: JSON.stringify({ path: "/workspace" })
          }).then(async (response) => [response.status, await response.text()] as const)
        )
      assert.deepStrictEqual(yield* listFiles(`${b}${a}`), [403, `{"detail":"Invalid API Key"}`])
      assert.strictEqual((yield* listFiles(key))[0], 200)
      yield* started.release

      // Kept alive: attach by session id, with the key read from the Secret (and kept alive again on release).
      const attached = yield* buildRuntime(
        KubernetesRuntime.attach(sessionId, {
          kubeConfig: cluster.kubeConfig,
          sandbox: new SandboxConfig({ keepRuntimeAlive: true })
        })
      )
      const out = yield* attached.rt.run(new CmdRunAction({ command: "hostname" }))
      assert.strictEqual(out.content.trim(), pod)
      yield* attached.release
      assert.deepStrictEqual((yield* sessionObjects(cluster.kubeConfig, sessionId)).pods, [pod])

      // What keepRuntimeAlive kept is the user's to delete.
      const removals: ReadonlyArray<() => Promise<unknown>> = [
        () => core.deleteNamespacedPod({ name: pod, namespace, gracePeriodSeconds: 0 }),
        () => core.deleteNamespacedService({ name: `${pod}-svc`, namespace }),
        () => core.deleteNamespacedSecret({ name: `${pod}-key`, namespace }),
        () => core.deleteNamespacedPersistentVolumeClaim({ name: `${pod}-pvc`, namespace })
      ]
      for (const remove of removals) yield* Effect.promise(remove)
      yield* Effect.promise(async () => {
        for (let i = 0; i < 100 && (await core.listNamespacedPod({ namespace })).items.length > 0; i++) {
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
      })
      yield* assertEngineClean(cluster.standIn)
    }), 240_000)
})
