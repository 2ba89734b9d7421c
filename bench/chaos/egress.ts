/**
 * Group egress: a DockerRuntime sandbox with `network: { allowOnly: [<one host address>] }`
 * (docs/network.md) tries every way around its egress proxy toward destinations this group starts on
 * this host: a TCP listener and a UDP listener (a DNS server's stand-in: any datagram counts) on all
 * interfaces, reached at the host's address on the sandboxes' bridge (the allowed one) and on the
 * default bridge (denied). It connects by raw IP with the proxy variables unset, over IPv6 (the
 * denied address IPv4-mapped, and any global IPv6 address it may have), sends DNS-shaped datagrams
 * straight to both addresses, asks its own resolver for a name (a tunnel would carry data in it),
 * and looks for the proxy's process (whose memory would hold the policy, later the secrets). The
 * allowed destination must be reached through the proxy (so the rows are not vacuous); nothing else
 * may arrive.
 */
import { ManagedRuntime } from "effect"
import { randomBytes } from "node:crypto"
import { createSocket } from "node:dgram"
import { createServer } from "node:net"
import { DockerRuntime } from "../../src/docker.ts"
import { IMAGE_NODE } from "../../src/engines/docker/containerSpec.ts"
import { Runtime } from "../../src/index.ts"
import { hostAddresses } from "./egressHosts.ts"
import { baseImage } from "./ownerProcess.ts"
import { atLeast, atMost, type GroupContext, type Row } from "./rows.ts"

/** A TCP listener on all interfaces counting connections (answering each with `reached`), and a UDP one counting datagrams. */
const listeners = async () => {
  const counts = { tcp: 0, udp: 0 }
  const tcp = createServer((socket) => {
    counts.tcp++
    // An HTTP answer (the proxied fetch reads one), which a raw probe reads as text.
    socket.end("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nreached\n")
  })
  await new Promise<void>((resolve) => tcp.listen(0, "0.0.0.0", resolve))
  const udp = createSocket("udp4")
  udp.on("message", () => counts.udp++)
  await new Promise<void>((resolve) => udp.bind(0, "0.0.0.0", resolve))
  const close = () => (tcp.close(), udp.close())
  return { counts, tcpPort: (tcp.address() as { port: number }).port, udpPort: udp.address().port, close }
}

/** Bash's /dev/tcp connect (2 s): `reached` or `blocked`. */
const tcpProbe = (host: string, port: number) =>
  `(timeout 2 bash -c 'cat < /dev/tcp/${host}/${port}' 2>/dev/null | grep -q reached && echo reached || echo blocked)`

export const egressRows = async (_: GroupContext): Promise<ReadonlyArray<Row>> => {
  const { sandboxBridge: allowed, defaultBridge: denied } = await hostAddresses()
  const hosts = await listeners()
  const session = `chaos-egress-${randomBytes(5).toString("hex")}`
  const sandbox = ManagedRuntime.make(
    DockerRuntime.layer({ baseImage: baseImage(), sessionId: session, network: { allowOnly: [`${allowed}/32`] } })
  )
  try {
    const rt = await sandbox.runPromise(Runtime)
    const run = (command: string) => sandbox.runPromise(rt.runCommand(command)).then((obs) => obs.content)
    const proxied = await run(
      `${IMAGE_NODE} -e 'fetch(process.argv[1]).then((r) => r.text()).then(console.log, () => console.log("failed"))' ` +
        `http://${allowed}:${hosts.tcpPort}/`
    )
    const throughProxy = proxied.includes("reached") ? 1 : 0
    const afterProxy = hosts.counts.tcp
    const unset = "unset HTTP_PROXY HTTPS_PROXY http_proxy https_proxy ALL_PROXY all_proxy"
    const raw = await run(
      `${unset}; ${tcpProbe(allowed, hosts.tcpPort)}; ${tcpProbe(denied, hosts.tcpPort)}`
    )
    const ipv6 = await run(
      `${tcpProbe(`::ffff:${denied}`, hosts.tcpPort)}; ` +
        `grep -v -e ' lo$' /proc/net/if_inet6 | grep -v '^fe80' | wc -l`
    )
    const dns = await run(
      `for h in ${allowed} ${denied}; do printf 'tunnel-data' > /dev/udp/$h/${hosts.udpPort}; done 2>/dev/null; ` +
        `timeout 5 getent hosts tunnel-$(date +%s).chaos.test >/dev/null && echo resolved || echo unresolved`
    )
    const proxyProcess = await run("grep -l 'egress-prox[y]' /proc/[0-9]*/cmdline 2>/dev/null | wc -l")
    // Datagrams are not acknowledged: give any a moment to arrive before counting.
    await new Promise((resolve) => setTimeout(resolve, 500))
    const bypassed = hosts.counts.tcp - afterProxy
    return [
      atLeast("egress: allowed host reached through the proxy", throughProxy, "requests", 1),
      atMost("egress: raw IP (proxy variables unset) reached a host", bypassed, "connections", 0),
      atMost("egress: raw IP probes answered", (raw.match(/reached/g) ?? []).length, "probes", 0),
      atMost("egress: IPv6 (mapped) probes answered", (ipv6.match(/reached/g) ?? []).length, "probes", 0),
      atMost("egress: global IPv6 addresses in the sandbox", Number(ipv6.trim().split("\n").at(-1)), "addresses", 0),
      atMost("egress: DNS-shaped datagrams that left the sandbox", hosts.counts.udp, "datagrams", 0),
      atMost("egress: names the sandbox's own resolver answered", dns.includes("unresolved") ? 0 : 1, "names", 0),
      atMost("egress: proxy processes visible from the sandbox", Number(proxyProcess.trim()), "processes", 0)
    ]
  } finally {
    await sandbox.dispose()
    hosts.close()
  }
}
