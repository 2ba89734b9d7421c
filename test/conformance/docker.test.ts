import { afterAll, assert } from "@effect/vitest"
import { DockerRuntime } from "../../src/index.ts"
import { baseImage, containersWithLabel, describeDocker } from "../docker/infra.ts"
import { runConformance } from "./suite.ts"

describeDocker("docker", () => {
  const image = baseImage()
  runConformance({
    name: "DockerRuntime",
    layer: ({ noChangeTimeoutSeconds }) => DockerRuntime.layer({ baseImage: image, noChangeTimeoutSeconds }),
    // The container is the boundary, as in OpenHands.
    restrictedToWorkspace: false
  })
  afterAll(() => {
    // Every conformance test released its runtime: no container of this process may remain.
    assert.deepStrictEqual(containersWithLabel(`effect-sandbox.owner.pid=${process.pid}`), [])
  })
})
