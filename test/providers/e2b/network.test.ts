/**
 * The `network` option on E2BRuntime (docs/network.md), against the stand-in, which stores what a
 * create asked (and refuses an entry E2B would not take) without enforcing it: `"deny-all"` is
 * `allowInternetAccess: false`; `allowOnly` is `denyOut` everything with the rules in `allowOut`;
 * a wildcard domain or an IPv6 rule is refused at start, before any sandbox is made. A bound secret's
 * header (docs/secrets.md) is E2B's per-domain `rules` transform, and the value is not in the
 * sandbox's environment; its placeholder form is refused.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { E2BRuntime } from "../../../src/e2b.ts"
import { InvalidOptionsError } from "../../../src/index.ts"
import { buildRuntime, dockerCli } from "../../docker/helpers.ts"
import { describeDocker } from "../../docker/infra.ts"
import { inSandbox, standinOptions, suiteStandin } from "./fixture.ts"

describeDocker("E2BRuntime network option (stand-in)", () => {
  const standinOf = suiteStandin()
  const lastEgress = () => {
    const sandbox = [...standinOf().sandboxes.values()].at(-1)!
    return { allowInternetAccess: sandbox.allowInternetAccess, network: sandbox.network }
  }

  it.live(
    "deny-all and allowOnly reach the create as E2B's allowInternetAccess and allowOut/denyOut",
    () =>
      Effect.gen(function*() {
        yield* inSandbox(standinOf(), { network: "deny-all" }, () =>
          Effect.sync(() =>
            assert.deepStrictEqual(lastEgress(), { allowInternetAccess: false, network: undefined })
          ))
        yield* inSandbox(standinOf(), { network: { allowOnly: ["api.github.com", "10.0.0.0/8", "1.1.1.1"] } }, () =>
          Effect.sync(() =>
            assert.deepStrictEqual(lastEgress(), {
              allowInternetAccess: undefined,
              network: { denyOut: ["0.0.0.0/0"], allowOut: ["api.github.com", "10.0.0.0/8", "1.1.1.1/32"] }
            })
          ))
      }),
    120_000
  )

  it.live("a wildcard domain or an IPv6 rule is refused at start, before a sandbox is made", () =>
    Effect.gen(function*() {
      const before = standinOf().sandboxes.size
      for (const rule of ["*.pypi.org", "fd00::/8"]) {
        const error = yield* Effect.flip(
          buildRuntime(E2BRuntime.layer(standinOptions(standinOf(), { network: { allowOnly: [rule] } })))
        )
        assert.instanceOf(error, InvalidOptionsError)
        assert.strictEqual(
          (error as InvalidOptionsError).message,
          `E2BRuntime options: network: E2BRuntime cannot enforce the rule "${rule}": ` +
            "E2B's allowOut takes host names, IPv4 addresses and IPv4 CIDR blocks."
        )
      }
      assert.strictEqual(standinOf().sandboxes.size, before)
    }).pipe(Effect.scoped))

  it.live(
    "a secret's header is E2B's per-domain rule, out of the sandbox's environment; its placeholder form is refused",
    () =>
      Effect.gen(function*() {
        const value = "sk-e2b-standin-secret"
        const bound = (env?: string) => ({
          network: { allowOnly: ["api.github.com", "10.0.0.0/8"] },
          secrets: [{
            value: Redacted.make(value),
            hosts: ["api.github.com"],
            header: { name: "Authorization", value: "Bearer {secret}" },
            ...(env === undefined ? {} : { env })
          }]
        })
        yield* inSandbox(standinOf(), bound(), () =>
          Effect.sync(() => {
            const sandbox = [...standinOf().sandboxes.values()].at(-1)!
            assert.deepStrictEqual(sandbox.network?.rules, {
              "api.github.com": [{ transform: { headers: { Authorization: `Bearer ${value}` } } }]
            })
            // Nor in the VM's environment nor any process the runtime started in it.
            assert.notInclude(dockerCli("inspect", sandbox.container).stdout, value)
            assert.notInclude(JSON.stringify([...sandbox.processes.values()]), value)
          }))
        const before = standinOf().sandboxes.size
        const error = yield* Effect.flip(buildRuntime(E2BRuntime.layer(standinOptions(standinOf(), bound("TOKEN")))))
        assert.strictEqual(
          (error as InvalidOptionsError).message,
          "E2BRuntime options: secrets[0]: E2B's egress proxy sets a header per host name (network.rules): it swaps " +
            "no placeholder (env) and takes no address."
        )
        assert.strictEqual(standinOf().sandboxes.size, before)
      }).pipe(Effect.scoped),
    120_000
  )
})
