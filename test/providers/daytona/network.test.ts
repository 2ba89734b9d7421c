/**
 * The `network` option on DaytonaRuntime (docs/network.md), against the stand-in, which stores the
 * create's egress fields (and refuses an allow list Daytona would not take) without enforcing them:
 * `"deny-all"` is `networkBlockAll`; `allowOnly` is `networkAllowList` (IPv4 blocks) and
 * `domainAllowList` (host names); a wildcard domain, an IPv6 rule or a sixth block is refused at
 * start, before any sandbox is made.
 */
import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { InvalidOptionsError } from "../../../src/index.ts"
import type { NetworkPolicy } from "../../../src/network/policy.ts"
import { buildRuntime } from "../../docker/helpers.ts"
import { describeDocker } from "../../docker/infra.ts"
import { CONTAINER_SNAPSHOT, daytonaLayer, useStandIn } from "./infra.ts"

describeDocker("DaytonaRuntime network option (stand-in)", () => {
  const standInOf = useStandIn()
  const egressOf = (network: NetworkPolicy) =>
    Effect.gen(function*() {
      const sessionId = `dtn-net-${randomBytes(3).toString("hex")}`
      const { release } = yield* buildRuntime(
        daytonaLayer(standInOf(), { snapshot: CONTAINER_SNAPSHOT, sessionId, network })
      )
      const sandbox = [...standInOf().sandboxes.byId.values()].find((x) =>
        x.labels["effect-sandbox.session"] === sessionId
      )!
      yield* release
      return [sandbox.networkBlockAll, sandbox.networkAllowList, sandbox.domainAllowList]
    }).pipe(Effect.scoped)

  it.live(
    "deny-all is networkBlockAll; allowOnly is networkAllowList and domainAllowList",
    () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* egressOf("deny-all"), [true, undefined, undefined])
        assert.deepStrictEqual(
          yield* egressOf({ allowOnly: ["10.0.0.0/8", "pypi.org", "1.1.1.1", "files.pythonhosted.org"] }),
          [false, "10.0.0.0/8,1.1.1.1/32", "pypi.org,files.pythonhosted.org"]
        )
      }),
    120_000
  )

  it.live("a wildcard domain, an IPv6 rule or a sixth block is refused at start", () =>
    Effect.gen(function*() {
      const before = standInOf().sandboxes.byId.size
      const refusal = (allowOnly: ReadonlyArray<string>) =>
        buildRuntime(daytonaLayer(standInOf(), { network: { allowOnly } })).pipe(
          Effect.flip,
          Effect.map((error) => {
            assert.instanceOf(error, InvalidOptionsError)
            return (error as InvalidOptionsError).message
          })
        )
      const why =
        "Daytona's networkAllowList takes IPv4 blocks and its domainAllowList host names, as this runtime maps them."
      assert.strictEqual(
        yield* refusal(["*.pypi.org"]),
        `DaytonaRuntime options: network: DaytonaRuntime cannot enforce the rule "*.pypi.org": ${why}`
      )
      assert.strictEqual(
        yield* refusal(["fd00::/8"]),
        `DaytonaRuntime options: network: DaytonaRuntime cannot enforce the rule "fd00::/8": ${why}`
      )
      assert.strictEqual(
        yield* refusal(["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.6"]),
        "DaytonaRuntime options: network: Daytona's networkAllowList takes at most 5 blocks (6 given)."
      )
      assert.strictEqual(standInOf().sandboxes.byId.size, before)
    }).pipe(Effect.scoped))
})
