/**
 * The `secrets` option on DockerRuntime (docs/secrets.md), end to end against one HTTP server this
 * test starts on this host, reached from the sandbox at two of the host's addresses, both allowed:
 * the sandboxes' bridge gateway (the secret's bound host) and the default bridge's (another host).
 * One sandbox for every case. The server records what it received on the host side and answers
 * `ok` (a destination that echoed the request would hand the value to the sandbox, docs/secrets.md).
 */
import { afterAll, assert, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { readFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { IMAGE_NODE } from "../../src/engines/docker/containerSpec.ts"
import { egressName } from "../../src/engines/docker/egress.ts"
import { assertNoEgress, bridgeAddress, gatewayOf, removeEgressLeftovers } from "./egressHosts.ts"
import { assertNoContainer, buildRuntime, containerName, dockerCli, dockerLayer, sessionId, sh } from "./helpers.ts"
import { baseImage, describeDocker } from "./infra.ts"

const VALUE = `sk-test-${Math.random().toString(36).slice(2)}-edge`

/** What the server received: the address it was reached at, the path, the headers. */
interface Received {
  readonly at: string
  readonly url: string
  readonly headers: Record<string, unknown>
}

/** The server: records each request; `/redirect` sends the client on to `other`'s `/landed`. */
const startDestination = (received: Array<Received>, other: () => string) =>
  Effect.acquireRelease(
    Effect.callback<Server>((resume) => {
      const server = createServer((request, response) => {
        received.push({ at: request.socket.localAddress ?? "", url: request.url ?? "", headers: request.headers })
        if (request.url?.startsWith("/redirect?") === true) {
          response.writeHead(302, { location: `${other()}/landed` }).end()
        } else response.end("ok")
      })
      server.listen(0, "0.0.0.0", () => resume(Effect.succeed(server)))
    }),
    (server) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
  ).pipe(Effect.map((server) => (server.address() as AddressInfo).port))

/** A GET from inside the sandbox (Node's fetch through the proxy) sending the placeholder in a header and the query. */
const get = (url: string) =>
  `${IMAGE_NODE} -e 'fetch(process.argv[1] + "?key=" + process.env.API_TOKEN, { headers: { "x-api-key": ` +
  `process.env.API_TOKEN }, signal: AbortSignal.timeout(5000) }).then(async (r) => console.log(r.status, await r.text()), ` +
  `(e) => { console.log("failed", e.cause?.code ?? e.name); process.exit(1) })' ${url}`

/** Every process's environment and command line in the container, read on the host (as root: all of them). */
const processesOf = (container: string) =>
  dockerCli("top", container, "-eo", "pid").stdout.split("\n").slice(1).map((line) => line.trim()).filter((pid) =>
    pid !== ""
  ).flatMap((pid) => {
    try {
      return [readFileSync(`/proc/${pid}/environ`, "latin1"), readFileSync(`/proc/${pid}/cmdline`, "latin1")]
    } catch {
      return []
    }
  })

describeDocker("DockerRuntime secrets at the edge", () => {
  afterAll(() => removeEgressLeftovers("secrets"))

  it.live(
    "the bound host receives the value; another host, a redirect and the sandbox itself see only the placeholder",
    () =>
      Effect.gen(function*() {
        const bound = yield* bridgeAddress
        const other = gatewayOf("bridge")
        const received: Array<Received> = []
        let port = 0
        port = yield* startDestination(received, () => `http://${other}:${port}`)
        const session = sessionId("secrets")
        const name = containerName(session)
        const { release, rt } = yield* buildRuntime(dockerLayer(baseImage(), {
          sessionId: session,
          network: { allowOnly: [bound, other] },
          secrets: [{
            value: Redacted.make(VALUE),
            hosts: [bound],
            env: "API_TOKEN",
            header: { name: "Authorization", value: "Bearer {secret}" }
          }]
        }))
        const outputs: Array<string> = []
        const run = (command: string) =>
          sh(rt, command).pipe(Effect.tap((obs) => Effect.sync(() => outputs.push(obs.content))))
        const placeholder = (yield* run("printenv API_TOKEN")).content.trim()
        assert.match(placeholder, /^effect-sandbox-secret-[\w-]{32}$/)

        assert.strictEqual((yield* run(get(`http://${bound}:${port}/bound`))).content.trim(), "200 ok")
        assert.deepStrictEqual(received.at(-1), {
          at: bound,
          url: `/bound?key=${VALUE}`,
          headers: { ...received.at(-1)!.headers, "x-api-key": VALUE, authorization: `Bearer ${VALUE}` }
        })
        assert.strictEqual((yield* run(get(`http://${other}:${port}/other`))).content.trim(), "200 ok")
        assert.strictEqual(received.at(-1)!.url, `/other?key=${placeholder}`)
        assert.strictEqual(received.at(-1)!.headers["x-api-key"], placeholder)
        assert.notProperty(received.at(-1)!.headers, "authorization")
        // The bound host redirects to the other one: the client follows, without the injected header.
        assert.strictEqual((yield* run(get(`http://${bound}:${port}/redirect`))).content.trim(), "200 ok")
        assert.deepStrictEqual(received.slice(-2).map((r) => [r.at, r.url.split("?")[0]]), [[bound, "/redirect"], [
          other,
          "/landed"
        ]])
        assert.notInclude(JSON.stringify(received.at(-1)), VALUE)

        // Inside: in no environment, command line or file a command can read. The search's pattern
        // is spelled in escapes that a builtin expands onto grep's stdin: neither the command (which
        // the server writes to a file) nor any process of the search holds the value itself.
        const search = (text: string) =>
          run(
            `printf '${
              [...Buffer.from(text)].map((byte) => `\\x${byte.toString(16).padStart(2, "0")}`).join("")
            }\\n' | grep -rlsF -f - /proc/[0-9]*/environ /proc/[0-9]*/cmdline /tmp /workspace /home /etc /root ` +
              `/var/tmp /run 2>/dev/null`
          ).pipe(Effect.map((obs) => obs.content.trim()))
        assert.strictEqual(yield* search(VALUE), "")
        // The same search finds the placeholder (in the environments of the shell and the server): it can find.
        assert.match(yield* search(placeholder), /^\/proc\/\d+\/environ$/m)
        // Every process of the sandbox, as the host sees it.
        const processes = processesOf(name)
        assert.isAbove(processes.length, 2)
        for (const text of processes) assert.notInclude(text, VALUE)
        // Nor in what the engine shows of either container, nor in the gateway's log.
        const inspected = dockerCli("inspect", name, egressName(name)).stdout
        assert.include(inspected, placeholder)
        assert.notInclude(inspected, VALUE)
        const log = dockerCli("logs", egressName(name))
        assert.notInclude(log.stdout + log.stderr, VALUE)
        // Nor in any command's output.
        for (const output of outputs) assert.notInclude(output, VALUE)
        yield* release
        assertNoContainer(session)
        assertNoEgress(session)
      }).pipe(Effect.scoped),
    120_000
  )
})
