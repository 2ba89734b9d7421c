/**
 * The conformance suite against ModalRuntime, driven through the real `modal` SDK against the Modal
 * stand-in (test/providers/modal/README.md: Modal's gRPC API, sandboxes as containers on the local
 * engine, TLS tunnels): the runtime image (the one the E2B tests build) published as
 * `effect-sandbox-runtime`. The tools cases are skipped (the base image has none of them), and
 * pause with them: Modal cannot freeze a sandbox. Fork runs: Modal's filesystem snapshot, through the
 * stand-in's task command router.
 */
import { beforeAll } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { ModalRuntime } from "../../src/modal.ts"
import { describeDocker } from "../docker/infra.ts"
import { standinOptions, TOKEN_ID, TOKEN_SECRET, useModalStandin } from "../providers/modal/fixture.ts"
import { modalLifecycle } from "./hosted/modal.ts"
import { hostedLifecycleConformance } from "./hostedLifecycle.ts"
import { runConformance } from "./suite.ts"

describeDocker("modal (stand-in)", () => {
  // Closed after the suite, which must have left no sandbox (container) behind.
  const standin = useModalStandin()
  const layer = (noChangeTimeoutSeconds: number) =>
    ModalRuntime.layer(standinOptions(standin(), { noChangeTimeoutSeconds }))

  // The first start pays for the payload's first load: here, not in the first case's 30 s.
  beforeAll(() => Effect.runPromise(Effect.scoped(Layer.build(layer(10)))), 300_000)

  runConformance({
    name: "ModalRuntime (stand-in, runtime image)",
    layer: ({ noChangeTimeoutSeconds }) => layer(noChangeTimeoutSeconds),
    containsProcesses: true,
    capabilities: { pause: false, ipython: false, browser: false, mcp: false, snapshot: true }
  })

  hostedLifecycleConformance(
    modalLifecycle(() => ({
      image: "effect-sandbox-runtime",
      standin: { url: standin().url, tokenId: TOKEN_ID, tokenSecret: TOKEN_SECRET, certificate: standin().certificate }
    }))
  )
})
