/**
 * The `secrets` option (docs/secrets.md) without a container: each bad field refused naming it (and
 * never the value), the refusal of every runtime without an edge of its own, and the egress proxy
 * putting a bound secret on plain-HTTP requests to its host only, with the test's own names
 * (bound.test, other.test: this machine's loopback).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Redacted } from "effect"
import { createServer, request } from "node:http"
import { connect } from "node:net"
import { checkSecretsOption } from "../../src/hosted/secretsOption.ts"
import { CliRuntime } from "../../src/index.ts"
import { LocalRuntime } from "../../src/local.ts"
import { bindSecrets, type EdgeSecret, parseEdgeSecrets } from "../../src/network/edgeSecrets.ts"
import { type Lookup, makeEgressProxy } from "../../src/network/egressProxy.ts"
import { parseNetworkPolicy } from "../../src/network/policy.ts"
import { listen } from "./listen.ts"

const VALUE = "sk-live-test-value-0123456789"
const token = Redacted.make(VALUE)
const network = { allowOnly: ["bound.test", "other.test", "*.api.test", "10.1.2.3", "127.0.0.0/8"] }

/** The option parsed against `network`, failing with the message. */
const parse = (secrets: ReadonlyArray<EdgeSecret>, policy: { network?: typeof network | "deny-all" } = { network }) =>
  parseNetworkPolicy("DockerRuntime", policy.network).pipe(
    Effect.flatMap((egress) => parseEdgeSecrets("DockerRuntime", secrets, egress)),
    Effect.flip,
    Effect.map((error) => error.message)
  )

const lookup: Lookup = (host) =>
  host === "bound.test" || host === "other.test"
    ? Promise.resolve(["127.0.0.1"])
    : Promise.reject(new Error("ENOTFOUND"))

/** What the destination received: its URL and headers, as JSON. */
interface Received {
  readonly url: string | undefined
  readonly headers: Record<string, string | Array<string> | undefined>
}

/** A GET through the proxy: the request line's absolute URL, and the headers the client writes. */
const viaProxy = (proxy: number, url: string, headers: Record<string, string>) =>
  Effect.callback<{ status: number; body: string }>((resume) => {
    request({ host: "127.0.0.1", port: proxy, path: url, headers }, (response) => {
      let body = ""
      response.on("data", (chunk) => body += chunk)
      response.on("end", () => resume(Effect.succeed({ status: response.statusCode ?? 0, body })))
    }).end()
  })

/**
 * A CONNECT through the proxy, then `inside` written in the tunnel once it is answered: everything
 * the client read until the connection closed.
 */
const connectVia = (proxy: number, target: string, inside: string | Buffer = "") =>
  Effect.callback<string>((resume) => {
    const socket = connect(
      proxy,
      "127.0.0.1",
      () => socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`)
    )
    let read = ""
    socket.on("data", (chunk) => {
      if (read === "" && inside.length > 0) socket.write(inside)
      else if (read === "") socket.end()
      read += chunk.toString("utf8")
    })
    socket.on("error", () => undefined)
    socket.on("close", () => resume(Effect.succeed(read)))
  })

describe("secrets at the edge", () => {
  it.effect("refuses each bad field by name, never showing the value", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [ReadonlyArray<EdgeSecret>, string]> = [
        [[{ value: Redacted.make(""), hosts: ["bound.test"], env: "T" }], "secrets[0].value: is empty."],
        [
          [{ value: Redacted.make("a\r\nX: y"), hosts: ["bound.test"], env: "T" }],
          "secrets[0].value: holds a line break"
        ],
        [[{ value: VALUE as never, hosts: ["bound.test"], env: "T" }], "secrets[0].value: expected a Redacted string"],
        [[{ value: token, hosts: [], env: "T" }], "secrets[0].hosts: expected at least one host"],
        [[{ value: token, hosts: ["bad host"], env: "T" }], `secrets[0].hosts: "bad host" is not a host name`],
        [[{ value: token, hosts: ["10.0.0.0/8"], env: "T" }], `secrets[0].hosts: "10.0.0.0/8" is not a host name`],
        [[{ value: token, hosts: ["elsewhere.test"], env: "T" }], `secrets[0].hosts: "elsewhere.test" is not allowed`],
        [[{ value: token, hosts: ["*.other.test"], env: "T" }], `secrets[0].hosts: "*.other.test" is not allowed`],
        [
          [{ value: token, hosts: ["bound.test"] }],
          "secrets[0]: expected env (a placeholder variable), header, or both."
        ],
        [[{ value: token, hosts: ["bound.test"], env: "1X" }], `secrets[0].env: "1X" is not an environment variable`],
        [
          [{ value: token, hosts: ["bound.test"], header: { name: "Bad Header" } }],
          `secrets[0].header.name: "Bad Header"`
        ],
        [
          [{ value: token, hosts: ["bound.test"], header: { name: "X", value: "Bearer" } }],
          "secrets[0].header.value: expected one line holding {secret}"
        ],
        [
          [{ value: token, hosts: ["bound.test"], env: "T" }, { value: token, hosts: ["other.test"], env: "T" }],
          "secrets: two secrets name the variable T."
        ]
      ]
      for (const [secrets, expected] of cases) {
        const message = yield* parse(secrets)
        assert.include(message, `DockerRuntime options: ${expected}`, message)
        assert.notInclude(message, VALUE)
      }
      const one = [{ value: token, hosts: ["bound.test"], env: "T" }]
      for (const policy of [{}, { network: "deny-all" }] as const) {
        assert.include(yield* parse(one, policy), "DockerRuntime options: secrets: need network: { allowOnly: [...] }")
      }
    }))

  it.effect("binds hosts, domains under an allowed domain and addresses, each with a placeholder of its own", () =>
    Effect.gen(function*() {
      const egress = yield* parseNetworkPolicy("DockerRuntime", network)
      const parsed = yield* parseEdgeSecrets("DockerRuntime", [
        {
          value: token,
          hosts: ["bound.test", "*.v1.api.test", "10.1.2.3"],
          env: "TOKEN",
          header: { name: "Authorization", value: "Bearer {secret}" }
        },
        { value: token, hosts: ["other.test"], env: "OTHER" }
      ], egress)
      const first = bindSecrets(parsed)
      const second = bindSecrets(parsed)
      assert.deepStrictEqual(first.bound[0]!.hosts.map((rule) => rule._tag), ["Host", "Domain", "Cidr"])
      assert.deepStrictEqual(Object.keys(first.env), ["TOKEN", "OTHER"])
      assert.match(first.env.TOKEN!, /^effect-sandbox-secret-[\w-]{32}$/)
      assert.notStrictEqual(first.env.TOKEN, first.env.OTHER)
      assert.notStrictEqual(first.env.TOKEN, second.env.TOKEN)
      assert.notInclude(JSON.stringify(first.env), VALUE)
    }))

  it.effect("every runtime without an edge of its own refuses the option at start", () =>
    Effect.gen(function*() {
      const secrets = [{ value: token, hosts: ["bound.test"], env: "T" }]
      for (
        const [name, layer] of [
          ["CliRuntime", CliRuntime.layer({ secrets })],
          ["LocalRuntime", LocalRuntime.layer({ secrets })]
        ] as const
      ) {
        const exit = yield* Effect.exit(Layer.build(layer).pipe(Effect.scoped))
        assert.isTrue(Exit.isFailure(exit))
        assert.include(String(exit), `${name} options: secrets: ${name} cannot keep a secret out of its sandbox`)
        assert.notInclude(String(exit), VALUE)
      }
      // Every hosted driver but Docker's and E2B's (test/providers/e2b/secrets.test.ts) declares no edge.
      for (const provider of ["Kubernetes", "Remote", "Daytona", "Modal", "Runloop"]) {
        const message = yield* Effect.flip(checkSecretsOption(`${provider}Runtime`, { provider }, { network, secrets }))
        assert.strictEqual(
          message.message,
          `${provider}Runtime options: secrets: ${provider}Runtime cannot keep a secret out of its sandbox: this ` +
            `runtime puts nothing on a ${provider} sandbox's requests outside it (use DockerRuntime).`
        )
      }
      yield* checkSecretsOption("DockerRuntime", { provider: "Docker", edgeSecrets: () => Effect.void }, {
        network,
        secrets
      })
    }))

  it.live("the proxy puts the secret on plain HTTP to its host only (absolute form or tunnelled); TLS to it is closed", () =>
    Effect.gen(function*() {
      const destination = yield* listen(
        createServer((q, r) => r.end(JSON.stringify({ url: q.url, headers: q.headers } satisfies Received)))
      )
      const egress = yield* parseNetworkPolicy("DockerRuntime", network)
      const parsed = yield* parseEdgeSecrets("DockerRuntime", [
        {
          value: token,
          hosts: ["bound.test"],
          env: "TOKEN",
          header: { name: "Authorization", value: "Bearer {secret}" }
        }
      ], egress)
      const { bound, env } = bindSecrets(parsed)
      const placeholder = env.TOKEN!
      const denials: Array<string> = []
      const proxy = yield* listen(makeEgressProxy({
        rules: egress?._tag === "AllowOnly" ? egress.rules : [],
        lookup,
        secrets: bound,
        onDeny: (target, why) => denials.push(`${target} ${why}`)
      }))
      const asked = { "x-api-key": `key=${placeholder}`, authorization: `Bearer ${placeholder}` }
      const received = (url: string, headers: Record<string, string>) =>
        viaProxy(proxy, url, headers).pipe(Effect.map((answer) => JSON.parse(answer.body) as Received))

      const toBound = yield* received(`http://bound.test:${destination}/v1?key=${placeholder}`, asked)
      assert.strictEqual(toBound.url, `/v1?key=${VALUE}`)
      assert.strictEqual(toBound.headers["x-api-key"], `key=${VALUE}`)
      assert.strictEqual(toBound.headers.authorization, `Bearer ${VALUE}`)
      assert.strictEqual(toBound.headers.host, `bound.test:${destination}`)

      const toOther = yield* received(`http://other.test:${destination}/v1?key=${placeholder}`, asked)
      assert.strictEqual(toOther.url, `/v1?key=${placeholder}`)
      assert.deepStrictEqual([toOther.headers["x-api-key"], toOther.headers.authorization], [
        `key=${placeholder}`,
        `Bearer ${placeholder}`
      ])
      // The request line names other.test, the Host header the bound host: the request line decides.
      const tricked = yield* received(`http://other.test:${destination}/`, {
        ...asked,
        host: `bound.test:${destination}`
      })
      assert.notInclude(JSON.stringify(tricked), VALUE)
      assert.strictEqual(tricked.headers.host, `other.test:${destination}`)

      // Node's fetch tunnels plain HTTP too: inside a tunnel to the bound host, the tunnel's target decides.
      const tunnelled = yield* connectVia(
        proxy,
        `bound.test:${destination}`,
        `GET /t?key=${placeholder} HTTP/1.1\r\nHost: elsewhere.test\r\nX-Api-Key: ${placeholder}\r\nConnection: close\r\n\r\n`
      )
      assert.match(tunnelled, /^HTTP\/1\.1 200 Connection Established\r\n\r\nHTTP\/1\.1 200 OK/)
      const inTunnel = JSON.parse(tunnelled.slice(tunnelled.indexOf("{"))) as Received
      assert.deepStrictEqual([
        inTunnel.url,
        inTunnel.headers["x-api-key"],
        inTunnel.headers.authorization,
        inTunnel.headers.host
      ], [
        `/t?key=${VALUE}`,
        VALUE,
        `Bearer ${VALUE}`,
        `bound.test:${destination}`
      ])
      // TLS to the bound host is closed (not terminated here): a ClientHello's first bytes get nothing back.
      const tls = yield* connectVia(proxy, `bound.test:${destination}`, Buffer.from([0x16, 0x03, 0x01, 0x00, 0x05]))
      assert.strictEqual(tls, "HTTP/1.1 200 Connection Established\r\n\r\n")
      // A tunnel to another host is a plain tunnel: the placeholder passes as it is.
      const plain = yield* connectVia(
        proxy,
        `other.test:${destination}`,
        `GET /t HTTP/1.1\r\nHost: bound.test\r\nX-Api-Key: ${placeholder}\r\nConnection: close\r\n\r\n`
      )
      const throughOther = JSON.parse(plain.slice(plain.indexOf("{"))) as Received
      assert.deepStrictEqual([throughOther.headers["x-api-key"], throughOther.headers.authorization], [
        placeholder,
        undefined
      ])
      assert.deepStrictEqual(denials, [
        `bound.test:${destination} TLS to a host with a bound secret: the secret is put only on plain HTTP through ` +
        "the proxy (TLS is not terminated here: docs/secrets.md)"
      ])
      assert.notInclude(denials.join("\n"), VALUE)
    }).pipe(Effect.scoped))
})
