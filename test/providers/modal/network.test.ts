/**
 * The `network` option on ModalRuntime (docs/network.md), against the stand-in, which stores the
 * sandbox's NetworkAccess as the SDK encodes it (and refuses a malformed block as Modal does)
 * without enforcing it: `"deny-all"` is an allowlist with nothing on it; `allowOnly` puts blocks in
 * `allowedCidrs` and names in `allowedDomains`; an IPv6 rule is refused before any sandbox is made.
 */
import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { InvalidOptionsError } from "../../../src/index.ts"
import { ModalRuntime, type ModalRuntimeOptions } from "../../../src/modal.ts"
import { buildRuntime } from "../../docker/helpers.ts"
import { describeDocker } from "../../docker/infra.ts"
import { standinOptions, useModalStandin } from "./fixture.ts"

/** Modal's NetworkAccessType ALLOWLIST. */
const ALLOWLIST = 3

describeDocker("ModalRuntime network option (stand-in)", () => {
  const standinOf = useModalStandin()
  const accessOf = (options: ModalRuntimeOptions) =>
    Effect.gen(function*() {
      const { release } = yield* buildRuntime(ModalRuntime.layer(standinOptions(standinOf(), options)))
      const access = [...standinOf().sandboxes.values()].at(-1)!.definition.networkAccess
      yield* release
      return access
    })

  it.live("deny-all is an empty allowlist; allowOnly splits blocks and names", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* accessOf({ network: "deny-all" }), {
        networkAccessType: ALLOWLIST,
        allowedCidrs: [],
        allowedDomains: []
      })
      assert.deepStrictEqual(
        yield* accessOf({ network: { allowOnly: ["10.0.0.0/8", "pypi.org", "*.pythonhosted.org", "1.1.1.1"] } }),
        {
          networkAccessType: ALLOWLIST,
          allowedCidrs: ["10.0.0.0/8", "1.1.1.1/32"],
          allowedDomains: ["pypi.org", "*.pythonhosted.org"]
        }
      )
      assert.deepStrictEqual(yield* Effect.promise(() => standinOf().containers()), [])
    }).pipe(Effect.scoped), 120_000)

  it.live("an IPv6 rule is refused at start, before a sandbox is made", () =>
    Effect.gen(function*() {
      const before = standinOf().sandboxes.size
      const error = yield* Effect.flip(
        buildRuntime(ModalRuntime.layer(standinOptions(standinOf(), { network: { allowOnly: ["fd00::/8"] } })))
      )
      assert.instanceOf(error, InvalidOptionsError)
      assert.strictEqual(
        (error as InvalidOptionsError).message,
        "ModalRuntime options: network: ModalRuntime cannot enforce the rule \"fd00::/8\": " +
          "Modal's outboundCidrAllowlist is given IPv4 blocks only by this runtime."
      )
      assert.strictEqual(standinOf().sandboxes.size, before)
    }).pipe(Effect.scoped))
})
