/**
 * The destinations of the Docker egress tests: this host, reached from containers at two of its
 * own addresses (the sandboxes' bridge gateway and the default bridge's), never an outside address.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { egressName } from "../../src/engines/docker/egress.ts"
import { connectEngine, DockerEngine } from "../../src/engines/docker/engine.ts"
import { ensureIsolatedNetwork, SANDBOX_NETWORK } from "../../src/engines/docker/network.ts"
import { containerName, dockerCli, removeLeftovers, TEST_PREFIX } from "./helpers.ts"

/**
 * The host's address on a Docker network: its IPAM gateway, else the first address of its IPv4
 * subnet, which is where the engine puts the gateway (an engine may list the default bridge's
 * subnet without its gateway, whose interface is then down and unlisted by `networkInterfaces`).
 */
export const gatewayOf = (network: string): string => {
  const configs = JSON.parse(
    dockerCli("network", "inspect", network, "--format", "{{json .IPAM.Config}}").stdout
  ) as ReadonlyArray<{ readonly Subnet?: string; readonly Gateway?: string }>
  const v4 = configs.find((config) => config.Subnet?.includes(".") === true)
  if (v4 === undefined) return ""
  if (v4.Gateway) return v4.Gateway
  const [base = "", bits = "32"] = v4.Subnet!.split("/")
  const address = base.split(".").reduce((sum, octet) => sum * 256 + Number(octet), 0)
  const first = address - (address % 2 ** (32 - Number(bits))) + 1
  return [24, 16, 8, 0].map((shift) => Math.floor(first / 2 ** shift) % 256).join(".")
}

/** The host's address on the sandboxes' bridge, the network made first if missing. */
export const bridgeAddress = Effect.gen(function*() {
  const engine = yield* connectEngine
  yield* ensureIsolatedNetwork(SANDBOX_NETWORK).pipe(Effect.provideService(DockerEngine, engine))
  return gatewayOf(SANDBOX_NETWORK)
})

/** Nothing of the session's egress left: no gateway container, no network. */
export const assertNoEgress = (session: string) => {
  const name = egressName(containerName(session))
  assert.strictEqual(dockerCli("ps", "-aq", "--filter", `name=^${name}$`).stdout.trim(), "")
  assert.strictEqual(dockerCli("network", "ls", "-q", "--filter", `name=^${name}$`).stdout.trim(), "")
}

/** What a failed run of a test file left: its sessions' containers (sandboxes, gateways) and their networks. */
export const removeEgressLeftovers = (file: string) => {
  removeLeftovers(file)
  const networks = dockerCli("network", "ls", "-q", "--filter", `name=effect-sandbox-${TEST_PREFIX}-${file}-`).stdout
    .split("\n")
  for (const id of networks.filter((line) => line !== "")) dockerCli("network", "rm", id)
}

/** An HTTP server on every address of this host, answering which address it was reached at. */
export const startDestination = () =>
  Effect.acquireRelease(
    Effect.callback<Server>((resume) => {
      const server = createServer((request, response) => response.end(`reached ${request.socket.localAddress}`))
      server.listen(0, "0.0.0.0", () => resume(Effect.succeed(server)))
    }),
    (server) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
  ).pipe(Effect.map((server) => (server.address() as AddressInfo).port))
