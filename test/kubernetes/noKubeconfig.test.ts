/**
 * KubernetesRuntime with no kubeconfig anywhere says so, and where it looked, instead of the
 * message client-node's made-up fallback cluster gives ("HTTP protocol is not allowed when
 * skipTLSVerify is not set or false"). No cluster, no engine: the places are emptied here.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { KubernetesRuntime } from "../../src/kubernetes.ts"

const TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token"
const home = mkdtempSync(join(tmpdir(), "effect-sandbox-no-kube-"))
const saved = { HOME: process.env["HOME"], KUBECONFIG: process.env["KUBECONFIG"] }

const restore = (name: keyof typeof saved) => {
  const value = saved[name]
  if (value === undefined) delete process.env[name]
  else process.env[name] = value
}

beforeAll(() => {
  process.env["HOME"] = home
  delete process.env["KUBECONFIG"]
})
afterAll(() => {
  restore("HOME")
  restore("KUBECONFIG")
  rmSync(home, { recursive: true, force: true })
})

const startError = <A>(layer: Layer.Layer<A, { readonly _tag: string; readonly message: string }>) =>
  Effect.flip(Effect.scoped(Layer.build(layer))).pipe(Effect.map((error) => `${error._tag}: ${error.message}`))

describe("KubernetesRuntime without a kubeconfig", () => {
  it.effect("names the three places it looked", () =>
    Effect.gen(function*() {
      // The third place is the machine's: this test needs a machine that is not a pod.
      assert.isFalse(existsSync(TOKEN), `${TOKEN} exists: this machine is a pod with a service account`)
      assert.strictEqual(
        yield* startError(KubernetesRuntime.layer({})),
        `RuntimeStartError: No kubeconfig found: KUBECONFIG is not set, there is no ~/.kube/config (${home}/.kube/config) ` +
          `and no in-cluster service account (${TOKEN}). Set KUBECONFIG, write ~/.kube/config, or run in a pod with ` +
          "a service account."
      )
    }))

  it.effect("an empty KUBECONFIG is named as such", () =>
    Effect.gen(function*() {
      process.env["KUBECONFIG"] = ""
      const message = yield* startError(KubernetesRuntime.layer({})).pipe(
        Effect.ensuring(Effect.sync(() => delete process.env["KUBECONFIG"]))
      )
      assert.include(message, "No kubeconfig found: KUBECONFIG is empty, there is no ~/.kube/config")
    }))
})
