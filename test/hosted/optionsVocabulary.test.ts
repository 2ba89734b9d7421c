/**
 * One public shape and one options vocabulary for every runtime module (issue 21): each hosted
 * runtime exports `layer`, `layerPool` (sized by `poolSize`), `layerWarm`, `attach(sessionId)`,
 * `listSnapshots` and `removeSnapshot`,
 * takes `HostedOptions` under the same names, and none brings back a name the vocabulary
 * replaced. Checked by the type-checker (`npm test` runs `tsc` first); the runtime assertions only
 * make the cases visible in the report.
 */
import { assert, describe, expectTypeOf, it } from "@effect/vitest"
import { DaytonaRuntime, type DaytonaRuntimeOptions, DaytonaSandboxPool } from "../../src/daytona.ts"
import { DockerRuntime, type DockerRuntimeOptions, DockerSandboxPool } from "../../src/docker.ts"
import { E2BRuntime, type E2BRuntimeOptions, E2BSandboxPool } from "../../src/e2b.ts"
import type { HostedRuntime } from "../../src/hosted/hostedRuntime.ts"
import type { HostedOptions, PoolOptions } from "../../src/hosted/options.ts"
import { KubernetesRuntime, type KubernetesRuntimeOptions, KubernetesSandboxPool } from "../../src/kubernetes.ts"
import { LocalRuntime } from "../../src/local.ts"
import { ModalRuntime, type ModalRuntimeOptions, ModalSandboxPool } from "../../src/modal.ts"
import { RemoteRuntime, type RemoteRuntimeOptions, RemoteRuntimePool } from "../../src/remote.ts"
import { RunloopDevboxPool, RunloopRuntime, type RunloopRuntimeOptions } from "../../src/runloop.ts"

/** Names the vocabulary replaced: none may come back on any runtime's options. */
type Replaced =
  | "warmServers"
  | "warmContainers"
  | "warmPods"
  | "warmSandboxes"
  | "warmDevboxes"
  | "rateLimitRetry"
  | "username"
  | "cpu"
  | "memoryBytes"
  | "autoStopMinutes"
  | "autoDeleteMinutes"

/** True when `O` keeps the shared names (it extends `HostedOptions`) and none of the replaced ones. */
type InVocabulary<O> = [Extract<keyof O, Replaced>] extends [never] ? O extends HostedOptions ? true : false : false

/** What every hosted runtime module exports, sorted. */
const HOSTED_VERBS = ["attach", "layer", "layerPool", "layerWarm", "listSnapshots", "removeSnapshot"]

describe("one public shape", () => {
  it("E2B: the hosted verbs and the shared options", () => {
    expectTypeOf(E2BRuntime).toEqualTypeOf<HostedRuntime<E2BRuntimeOptions, E2BSandboxPool>>()
    expectTypeOf<InVocabulary<E2BRuntimeOptions>>().toEqualTypeOf<true>()
    assert.deepStrictEqual(Object.keys(E2BRuntime).sort(), HOSTED_VERBS)
  })

  it("Modal: the hosted verbs and the shared options", () => {
    expectTypeOf(ModalRuntime).toEqualTypeOf<HostedRuntime<ModalRuntimeOptions, ModalSandboxPool>>()
    expectTypeOf<InVocabulary<ModalRuntimeOptions>>().toEqualTypeOf<true>()
    assert.deepStrictEqual(Object.keys(ModalRuntime).sort(), HOSTED_VERBS)
  })

  it("Runloop: the hosted verbs and the shared options", () => {
    expectTypeOf(RunloopRuntime).toEqualTypeOf<HostedRuntime<RunloopRuntimeOptions, RunloopDevboxPool>>()
    expectTypeOf<InVocabulary<RunloopRuntimeOptions>>().toEqualTypeOf<true>()
    assert.deepStrictEqual(Object.keys(RunloopRuntime).sort(), HOSTED_VERBS)
  })

  it("Daytona: the hosted verbs and the shared options", () => {
    expectTypeOf(DaytonaRuntime).toEqualTypeOf<HostedRuntime<DaytonaRuntimeOptions, DaytonaSandboxPool>>()
    expectTypeOf<InVocabulary<DaytonaRuntimeOptions>>().toEqualTypeOf<true>()
    assert.deepStrictEqual(Object.keys(DaytonaRuntime).sort(), HOSTED_VERBS)
  })

  it("Remote: the hosted verbs and the shared options", () => {
    expectTypeOf(RemoteRuntime).toEqualTypeOf<HostedRuntime<RemoteRuntimeOptions, RemoteRuntimePool>>()
    expectTypeOf<InVocabulary<RemoteRuntimeOptions>>().toEqualTypeOf<true>()
    assert.deepStrictEqual(Object.keys(RemoteRuntime).sort(), HOSTED_VERBS)
  })

  it("Kubernetes: the hosted verbs and the shared options, and the warm pool's SandboxTemplate", () => {
    expectTypeOf(KubernetesRuntime).toExtend<HostedRuntime<KubernetesRuntimeOptions, KubernetesSandboxPool>>()
    expectTypeOf<InVocabulary<KubernetesRuntimeOptions>>().toEqualTypeOf<true>()
    assert.deepStrictEqual(Object.keys(KubernetesRuntime).sort(), [...HOSTED_VERBS, "sandboxTemplate"].sort())
  })

  it("Docker: the hosted verbs and the shared options (and a host workspace)", () => {
    expectTypeOf(DockerRuntime).toEqualTypeOf<HostedRuntime<DockerRuntimeOptions, DockerSandboxPool>>()
    expectTypeOf<InVocabulary<DockerRuntimeOptions>>().toEqualTypeOf<true>()
    assert.deepStrictEqual(Object.keys(DockerRuntime).sort(), HOSTED_VERBS)
  })

  it("Local: layer, a pool sized by poolSize, and connect by URL (no provider to attach through)", () => {
    expectTypeOf<Parameters<typeof LocalRuntime.layerPool>[0]>().toExtend<PoolOptions>()
    assert.deepStrictEqual(Object.keys(LocalRuntime).sort(), ["connect", "layer", "layerPool", "layerWarm"])
  })
})
