/**
 * Every container of ours is created with every label of ours (labels.ts): the image's labels of
 * the same names never survive the create, nor can OpenHands' `docker_runtime_kwargs` drop or
 * replace ours; an empty label reads as absent. No engine needed: the create options themselves.
 */
import { assert, describe, it } from "@effect/vitest"
import { sandboxContainerSpec } from "../../src/engines/docker/containerSpec.ts"
import { LABEL, labelOf } from "../../src/engines/docker/labels.ts"
import { TAGS } from "../../src/hosted/ownerTags.ts"
import { SandboxConfig } from "../../src/schema/SandboxConfig.ts"

const spec = (sandbox: SandboxConfig) =>
  sandboxContainerSpec({
    name: "effect-sandbox-s",
    image: "img",
    sessionId: "s",
    command: ["true"],
    env: {},
    labels: { [LABEL.keepAlive]: "false", [LABEL.temporaryWorkspace]: undefined },
    ports: [],
    binds: [],
    limits: {},
    network: "effect-sandbox",
    sandbox
  })

describe("sandbox container labels", () => {
  it("writes every label of ours, empty where it has no value", () => {
    const labels = spec(new SandboxConfig({})).Labels!
    assert.sameMembers(Object.keys(labels), Object.values(LABEL))
    assert.strictEqual(labels[LABEL.session], "s")
    assert.strictEqual(labels[LABEL.keepAlive], "false")
    for (const key of [LABEL.temporaryWorkspace, LABEL.ownerLease, LABEL.runtimeId, LABEL.sessionKey]) {
      assert.strictEqual(labels[key], "", key)
      assert.isUndefined(labelOf(labels, key))
    }
  })

  it("keeps the operator's raw Labels beside ours, never instead of them", () => {
    const labels = spec(
      new SandboxConfig({
        dockerRuntimeKwargs: {
          Labels: { [LABEL.temporaryWorkspace]: "/home", [LABEL.session]: "other", team: "a" }
        }
      })
    ).Labels!
    assert.strictEqual(labels["team"], "a")
    assert.strictEqual(labels[LABEL.temporaryWorkspace], "")
    assert.strictEqual(labels[LABEL.session], "s")
  })

  it("the hosted owner tags are labels of ours by the same names (the driver writes them as labels)", () => {
    const ours: ReadonlyArray<string> = Object.values(LABEL)
    for (const tag of Object.values(TAGS)) assert.include(ours, tag)
  })
})
