/**
 * The conformance suite against RemoteRuntime, through `effect-sandbox-runtime-api` on the Docker
 * engine (run as its own process, test/remote/apiServer.ts): every action goes client → runtime
 * API's sandbox → action server, as a team's agents would use it. The base image only, so the
 * IPython, browser and MCP cases are skipped as on every base-image target.
 */
import { afterAll, assert, beforeAll } from "@effect/vitest"
import { Effect, Layer, Redacted, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import { RemoteRuntime } from "../../src/remote.ts"
import { dockerCli } from "../docker/helpers.ts"
import { baseImage, describeDocker } from "../docker/infra.ts"
import { type ApiServer, newSessionId, PREFIX, removeLeftovers, startApiServer } from "../remote/apiServer.ts"
import { remoteLifecycle } from "./hosted/remote.ts"
import { hostedLifecycleConformance } from "./hostedLifecycle.ts"
import { runConformance } from "./suite.ts"

const KEY = randomBytes(16).toString("hex")

describeDocker("remote (runtime API on Docker)", () => {
  let server: ApiServer | undefined
  const layer = (noChangeTimeoutSeconds: number) =>
    RemoteRuntime.layer({
      apiUrl: server!.base,
      apiKey: Redacted.make(KEY),
      sessionId: newSessionId(),
      baseImage: baseImage(),
      noChangeTimeoutSeconds,
      schedules: { podStatus: Schedule.spaced("100 millis"), buildStatus: Schedule.spaced("500 millis") }
    })
  // The API server, and the first start building the runtime image through /build (a minute on a busy machine).
  beforeAll(async () => {
    server = await startApiServer([], KEY)
    await Effect.runPromise(Effect.scoped(Layer.build(layer(10))))
  }, 300_000)
  runConformance({
    name: "RemoteRuntime (runtime API, base image)",
    layer: ({ noChangeTimeoutSeconds }) => layer(noChangeTimeoutSeconds),
    containsProcesses: true,
    capabilities: { pause: true, ipython: false, browser: false, mcp: false, snapshot: false }
  })
  hostedLifecycleConformance(remoteLifecycle(() => ({ apiUrl: server!.base, key: KEY })))
  afterAll(async () => {
    await server?.kill()
    // Every case released its runtime, which stops its sandbox: none of this API's containers remain
    // (only this file's prefix: other files' API servers run beside it).
    const left = dockerCli("ps", "-aq", "--filter", `name=${PREFIX}-`).stdout.trim()
    removeLeftovers()
    assert.strictEqual(left, "")
  })
})
