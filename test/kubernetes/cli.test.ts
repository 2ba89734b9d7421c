/**
 * `effect-sandbox run --runtime kubernetes`: the real CLI (from source, a child process) on the
 * Kubernetes stand-in, found through `KUBECONFIG` as client-node finds a cluster, the runtime image
 * built from `--image`. The CLI's session deletes its PVC too (its workspace is temporary, as on
 * the other runtimes): nothing of it is left.
 */
import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { runCli } from "../cli/cliProcess.ts"
import { baseImage, describeDocker } from "../docker/infra.ts"
import { assertEngineClean, useStandIn } from "./helpers.ts"

describeDocker("effect-sandbox run --runtime kubernetes (stand-in)", () => {
  const cluster = useStandIn()

  it("runs the command in a pod and exits with its code; no pod, PVC, container or volume is left", async () => {
    const result = await runCli(
      ["run", "--runtime", "kubernetes", "--image", baseImage(), "--", "echo \"hi from $PWD\"; exit 3"],
      { ...process.env, KUBECONFIG: cluster.standIn.kubeconfigPath }
    )
    assert.strictEqual(result.stdout, "hi from /workspace\n", result.stderr)
    assert.strictEqual(result.status, 3)
    await Effect.runPromise(assertEngineClean(cluster.standIn))
  }, 300_000)
})
