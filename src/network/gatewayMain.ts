/**
 * The gateway of a sandbox whose egress is restricted (engines/docker/egress.ts): the one container
 * on both the sandbox's network (internal: no route out) and the outside. It forwards the ports the
 * host publishes (the server's, VS Code's, the app ports) to the sandbox, and, with an allow list,
 * serves the egress proxy (egressProxy.ts) on `proxyPort`. Bundled as payload/egress-proxy.mjs and
 * started as `node egress-proxy.mjs '<config JSON>'`; it logs each refusal on stderr. Bound secrets
 * (injection.ts) are not in that command line, which `docker inspect` shows: they are in a file
 * copied into the gateway before it starts, readable by its user only (engines/docker/egress.ts).
 */
import { readFileSync } from "node:fs"
import { connect, createServer } from "node:net"
import { makeEgressProxy } from "./egressProxy.ts"
import type { BoundSecret } from "./injection.ts"
import type { EgressRule } from "./policy.ts"

/** What the gateway is told at start (no secret: the command line is the engine's to show). */
export interface GatewayConfig {
  /** The sandbox's name on the internal network, which the forwarded ports reach. */
  readonly sandbox: string
  readonly ports: ReadonlyArray<number>
  /** With an allow list: the proxy's port, and the rules. */
  readonly proxy?: {
    readonly port: number
    readonly rules: ReadonlyArray<EgressRule>
    /** A JSON file of BoundSecret, when secrets are bound (its path only: the values are in no argument). */
    readonly secretsFile?: string
  }
}

const config = JSON.parse(process.argv[2] ?? "{}") as GatewayConfig

for (const port of config.ports) {
  createServer((client) => {
    const upstream = connect(port, config.sandbox)
    client.on("error", () => upstream.destroy())
    upstream.on("error", () => client.destroy())
    client.pipe(upstream).pipe(client)
  }).listen(port, "0.0.0.0")
}

if (config.proxy !== undefined) {
  const secrets = config.proxy.secretsFile === undefined
    ? []
    : JSON.parse(readFileSync(config.proxy.secretsFile, "utf8")) as ReadonlyArray<BoundSecret>
  makeEgressProxy({
    rules: config.proxy.rules,
    secrets,
    onDeny: (target, why) => process.stderr.write(`egress denied: ${target} (${why})\n`)
  }).listen(config.proxy.port, "0.0.0.0")
}
process.stdout.write(
  `effect-sandbox gateway ready ${JSON.stringify({ ports: config.ports, proxy: config.proxy?.port })}\n`
)
process.on("SIGTERM", () => process.exit(0))
