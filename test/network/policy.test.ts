/**
 * The `network` option's vocabulary (src/network/policy.ts) and the egress proxy's decisions
 * (src/network/egressProxy.ts), with a resolver of the test's own (no name leaves this machine), and
 * the proxy itself on 127.0.0.1 before two servers this test starts. Milliseconds: no container.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { createServer, request } from "node:http"
import { checkNetworkOption } from "../../src/hosted/networkOption.ts"
import { CliRuntime } from "../../src/index.ts"
import { LocalRuntime } from "../../src/local.ts"
import { decide, type Lookup, makeEgressProxy } from "../../src/network/egressProxy.ts"
import { type EgressRule, parseNetworkPolicy, refuseRules } from "../../src/network/policy.ts"
import { listen } from "./listen.ts"

const rulesOf = (allowOnly: ReadonlyArray<string>): ReadonlyArray<EgressRule> => {
  const policy = Effect.runSync(parseNetworkPolicy("Test", { allowOnly }))
  return policy?._tag === "AllowOnly" ? policy.rules : []
}

/** The test's own names: allowed.test and denied.test are this machine's loopback addresses. */
const lookup: Lookup = (host) =>
  host === "allowed.test" || host === "api.allowed.test"
    ? Promise.resolve(["127.0.0.1"])
    : host === "denied.test"
    ? Promise.resolve(["127.0.0.2"])
    : Promise.reject(new Error("ENOTFOUND"))

/** A GET of `url` through the proxy on `proxy` (absolute form): status and body. */
const viaProxy = (proxy: number, url: string) =>
  Effect.callback<{ status: number; body: string }>((resume) => {
    const target = new URL(url)
    request({ host: "127.0.0.1", port: proxy, path: url, headers: { host: target.host } }, (response) => {
      let body = ""
      response.on("data", (chunk) => body += chunk)
      response.on("end", () => resume(Effect.succeed({ status: response.statusCode ?? 0, body })))
    }).end()
  })

describe("network policy", () => {
  it.effect("parses the four rule forms and treats an empty list as deny-all", () =>
    Effect.gen(function*() {
      const policy = yield* parseNetworkPolicy("Test", {
        allowOnly: ["API.github.com", "*.pypi.org", "10.0.0.7", "fd00::/8"]
      })
      assert.deepStrictEqual(policy, {
        _tag: "AllowOnly",
        rules: [
          { _tag: "Host", text: "API.github.com", host: "api.github.com" },
          { _tag: "Domain", text: "*.pypi.org", suffix: "pypi.org" },
          { _tag: "Cidr", text: "10.0.0.7", address: "10.0.0.7", prefix: 32, family: "ipv4" },
          { _tag: "Cidr", text: "fd00::/8", address: "fd00::", prefix: 8, family: "ipv6" }
        ]
      })
      assert.deepStrictEqual(yield* parseNetworkPolicy("Test", { allowOnly: [] }), { _tag: "DenyAll" })
      assert.strictEqual(yield* parseNetworkPolicy("Test", undefined), undefined)
    }))

  it.effect("refuses a rule that is none of them, naming it", () =>
    Effect.gen(function*() {
      for (const bad of ["10.0.0.0/33", "*.com", "exa mple.com", "http://x.org", "*"]) {
        const error = yield* Effect.flip(parseNetworkPolicy("DockerRuntime", { allowOnly: [bad] }))
        assert.strictEqual(
          error.message,
          `DockerRuntime options: network: ${
            JSON.stringify(bad)
          } is not a host name, *.domain, IP address or CIDR block.`
        )
      }
    }))

  it.effect("a runtime refuses the first rule it cannot express; a driver without the option refuses it whole", () =>
    Effect.gen(function*() {
      const policy = yield* parseNetworkPolicy("Test", { allowOnly: ["10.0.0.0/8", "api.github.com"] })
      const error = yield* Effect.flip(
        refuseRules(
          "KubernetesRuntime",
          policy,
          (rule) => rule._tag !== "Cidr",
          "a NetworkPolicy takes CIDR blocks only"
        )
      )
      assert.strictEqual(
        error.message,
        "KubernetesRuntime options: network: KubernetesRuntime cannot enforce the rule \"api.github.com\": " +
          "a NetworkPolicy takes CIDR blocks only."
      )
      const whole = yield* Effect.flip(checkNetworkOption("RemoteRuntime", { provider: "Remote" }, "deny-all"))
      assert.strictEqual(
        whole.message,
        "RemoteRuntime options: network: RemoteRuntime cannot enforce \"deny-all\": Remote offers no egress control this runtime maps."
      )
    }))

  it.effect("Cli and Local refuse any policy at start: nothing of theirs stands between a command and the host's network", () =>
    Effect.gen(function*() {
      for (
        const [name, layer] of [
          ["CliRuntime", CliRuntime.layer({ network: "deny-all" })],
          ["LocalRuntime", LocalRuntime.layer({ network: { allowOnly: ["10.0.0.0/8"] } })]
        ] as const
      ) {
        const exit = yield* Effect.exit(Layer.build(layer).pipe(Effect.scoped))
        assert.isTrue(Exit.isFailure(exit))
        assert.include(String(exit), `${name} options: network: ${name} cannot enforce`)
      }
    }))

  it.effect("decides by name (Host, Domain), by the resolved address (Cidr), and never for an unresolved name", () =>
    Effect.gen(function*() {
      const rules = rulesOf(["allowed.test", "*.allowed.test", "127.0.0.3/32", "127.0.0.1/32"])
      const at = (host: string) => Effect.promise(() => decide(rules, host, lookup))
      assert.deepStrictEqual(yield* at("allowed.test"), { _tag: "Allow", address: "127.0.0.1" })
      assert.deepStrictEqual(yield* at("API.allowed.test."), { _tag: "Allow", address: "127.0.0.1" })
      assert.deepStrictEqual(yield* at("denied.test"), { _tag: "Deny", why: "name not allowed" })
      assert.deepStrictEqual(yield* at("nowhere.test"), { _tag: "Deny", why: "name not allowed" })
      assert.deepStrictEqual(yield* at("127.0.0.3"), { _tag: "Allow", address: "127.0.0.3" })
      assert.deepStrictEqual(yield* at("[::ffff:127.0.0.3]"), { _tag: "Allow", address: "::ffff:127.0.0.3" })
      assert.deepStrictEqual(yield* at("127.0.0.2"), { _tag: "Deny", why: "address not allowed" })
    }))

  it.effect("an allowed name that resolves off the public internet reaches it only through a CIDR rule", () =>
    Effect.gen(function*() {
      // Whoever controls an allowed name's DNS points it at the host, a neighbour or the metadata service.
      const pointed: Lookup = (host) =>
        Promise.resolve(
          host === "metadata.allowed.test"
            ? ["169.254.169.254"]
            : host === "neighbour.allowed.test"
            ? ["172.17.0.5", "::ffff:10.0.0.7", "fd00::5"]
            : host === "both.allowed.test"
            ? ["10.1.2.3", "93.184.216.34"]
            : ["127.0.0.1"]
        )
      const at = (rules: Array<string>, host: string) => Effect.promise(() => decide(rulesOf(rules), host, pointed))
      const offPublic = { _tag: "Deny", why: "name resolves only to addresses off the public internet" } as const
      for (const host of ["metadata.allowed.test", "neighbour.allowed.test", "allowed.test"]) {
        assert.deepStrictEqual(yield* at(["allowed.test", "*.allowed.test"], host), offPublic, host)
      }
      // The public address, never the private one, for a name that has both.
      assert.deepStrictEqual(yield* at(["*.allowed.test"], "both.allowed.test"), {
        _tag: "Allow",
        address: "93.184.216.34"
      })
      // A CIDR rule says the private range is meant.
      assert.deepStrictEqual(yield* at(["*.allowed.test", "10.0.0.0/8"], "neighbour.allowed.test"), {
        _tag: "Allow",
        address: "::ffff:10.0.0.7"
      })
    }))

  it.live("the proxy forwards an allowed name to the address it resolved, and refuses a denied one with a 403", () =>
    Effect.gen(function*() {
      const destination = yield* listen(createServer((q, r) => r.end(`reached ${q.headers.host}`)))
      const denials: Array<string> = []
      const proxy = yield* listen(
        makeEgressProxy({
          rules: rulesOf(["allowed.test", "127.0.0.1/32"]),
          lookup,
          onDeny: (target) => denials.push(target)
        })
      )
      assert.deepStrictEqual(yield* viaProxy(proxy, `http://allowed.test:${destination}/x`), {
        status: 200,
        body: `reached allowed.test:${destination}`
      })
      const refused = yield* viaProxy(proxy, `http://denied.test:${destination}/x`)
      assert.strictEqual(refused.status, 403)
      assert.strictEqual(
        refused.body,
        `effect-sandbox egress policy: denied.test:${destination} is not allowed (name not allowed)\n`
      )
      assert.deepStrictEqual(denials, [`denied.test:${destination}`])
    }).pipe(Effect.scoped))
})
