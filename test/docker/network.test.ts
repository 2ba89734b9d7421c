/**
 * What keeps one sandbox from its neighbours, read off the real containers: the isolated network
 * (inter-container communication off), no capability for the sandbox user and only a root
 * command's few for a command run as root (never NET_RAW or NET_ADMIN), `no-new-privileges`, for
 * DockerRuntime's containers and the runtime API's command containers; a neighbour's server port
 * unreachable over the bridge while the owner reaches it; nothing of a sandbox left on the network
 * after release.
 */
import { afterAll, assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { DockerEngine } from "../../src/engines/docker/engine.ts"
import { ensureIsolatedNetwork, ICC_OPTION, SANDBOX_NETWORK } from "../../src/engines/docker/network.ts"
import { RuntimeStartError } from "../../src/index.ts"
import { ROOT_CAPABILITIES } from "../../src/runtimeImage/capabilities.ts"
import { call, newSessionId, PREFIX, startApiServer, type Started } from "../remote/apiServer.ts"
import {
  assertNoContainer,
  buildRuntime,
  containerName,
  docker,
  dockerCli,
  dockerLayer,
  inspect,
  removeLeftovers,
  sessionId,
  sh
} from "./helpers.ts"
import { baseImage, describeDocker } from "./infra.ts"

/** Bit numbers of the capabilities named in capabilities.ts (linux/capability.h). */
const BITS: Readonly<Record<string, number>> = {
  CHOWN: 0,
  DAC_OVERRIDE: 1,
  FOWNER: 3,
  FSETID: 4,
  KILL: 5,
  SETGID: 6,
  SETUID: 7,
  NET_BIND_SERVICE: 10,
  AUDIT_WRITE: 29
}

/** `/proc/<pid>/status`'s capability mask of a set of names, as the kernel prints it. */
const mask = (names: ReadonlyArray<string>) =>
  names.reduce((m, name) => m | (1n << BigInt(BITS[name]!)), 0n).toString(16).padStart(16, "0")

/** The capability and privilege lines of a status file: effective, bounding, no_new_privs. */
const privileges = (status: string) =>
  Object.fromEntries(
    status.split("\n").filter((l) => /^(CapEff|CapBnd|NoNewPrivs):/.test(l)).map((l) =>
      l.split(/:\s+/) as [
        string,
        string
      ]
    )
  )

/** Opens an AF_PACKET raw socket (what ARP forging needs), or says why not. */
const PACKET_SOCKET = `perl -e 'socket(S, 17, 3, 0) or die "refused: $!\\n"; print "opened\\n"'`

/** Connect to `ip:port` from a shell inside a container; "reached" or "blocked" (3 s). */
const connectFrom = (ip: string, port: number) =>
  `timeout 3 bash -c 'echo > /dev/tcp/${ip}/${port}' 2>/dev/null && echo reached || echo blocked`

/** The container's address on the sandboxes' network. */
const addressOn = (info: { NetworkSettings: { Networks: Record<string, { IPAddress: string }> } }) =>
  info.NetworkSettings.Networks[SANDBOX_NETWORK]!.IPAddress

const networkInfo = Effect.promise(() => docker.getNetwork(SANDBOX_NETWORK).inspect())

/** Networks this file makes are named `dt-net-<random>`, and removed with it. */
const NETWORK_PREFIX = "dt-net-"

/** Ids of the networks named exactly `name`. */
const networksNamed = (name: string) =>
  dockerCli("network", "ls", "--filter", `name=${name}`, "--format", "{{.ID}} {{.Name}}").stdout.split("\n")
    .filter((line) => line.endsWith(` ${name}`)).map((line) => line.split(" ")[0]!)

describeDocker("DockerRuntime network and privileges", () => {
  const image = baseImage()
  const key = randomBytes(16).toString("hex")
  afterAll(() => {
    removeLeftovers("net")
    const networks = dockerCli("network", "ls", "-q", "--filter", `name=${NETWORK_PREFIX}`).stdout.split("\n")
      .filter((id) => id !== "")
    if (networks.length > 0) dockerCli("network", "rm", ...networks)
    const ids = dockerCli("ps", "-aq", "--filter", `name=${PREFIX}-`).stdout.split("\n").filter((id) => id !== "")
    if (ids.length > 0) dockerCli("rm", "-f", "-v", ...ids)
  })

  it.live(
    "a sandbox keeps no capability and gains none, on the isolated network; release leaves nothing on it",
    () =>
      Effect.gen(function*() {
        const session = sessionId("net")
        const { release, rt } = yield* buildRuntime(dockerLayer(image, { sessionId: session }))
        const info = (yield* inspect(containerName(session)))!
        assert.deepStrictEqual(info.HostConfig.CapDrop, ["ALL"])
        assert.isNull(info.HostConfig.CapAdd)
        assert.deepStrictEqual(info.HostConfig.SecurityOpt, ["no-new-privileges"])
        assert.deepStrictEqual(Object.keys(info.NetworkSettings.Networks), [SANDBOX_NETWORK])
        const network = yield* networkInfo
        assert.strictEqual(network.Options?.[ICC_OPTION], "false")
        assert.strictEqual(network.Driver, "bridge")
        assert.property(network.Containers ?? {}, info.Id)

        // The server (pid 1's child) and the agent's shell, as the kernel sees them.
        const zero = "0000000000000000"
        const shell = yield* sh(rt, "cat /proc/self/status")
        assert.deepStrictEqual(privileges(shell.content), { CapEff: zero, CapBnd: zero, NoNewPrivs: "1" })
        const raw = yield* sh(rt, PACKET_SOCKET)
        assert.strictEqual(raw.content, "refused: Operation not permitted")

        yield* release
        assertNoContainer(session)
        // The network is shared and stays (network.ts); the container's endpoint is gone from it.
        assert.notProperty((yield* networkInfo).Containers ?? {}, info.Id)
      }),
    240_000
  )

  it.live(
    "a runtime API command runs as root with a root command's capabilities only (no NET_RAW), and no neighbour's port answers it",
    () =>
      Effect.gen(function*() {
        const server = yield* Effect.promise(() => startApiServer([], key))
        yield* Effect.addFinalizer(() => Effect.promise(() => server.kill()))
        const victim = sessionId("net")
        yield* buildRuntime(dockerLayer(image, { sessionId: victim }))
        const victimIp = addressOn((yield* inspect(containerName(victim)))!)

        const sid = newSessionId()
        const started = yield* Effect.promise(() =>
          call(server.base, "POST", "/start", {
            key,
            body: { session_id: sid, image, command: ["sleep", "infinity"] }
          })
        )
        assert.strictEqual(started.status, 200, JSON.stringify(started.body))
        const name = `${PREFIX}-${sid}`
        const info = (yield* inspect(name))!
        assert.strictEqual(info.Config.User, "")
        assert.deepStrictEqual(info.HostConfig.CapDrop, ["ALL"])
        assert.deepStrictEqual(info.HostConfig.CapAdd, [...ROOT_CAPABILITIES])
        assert.deepStrictEqual(info.HostConfig.SecurityOpt, ["no-new-privileges"])
        assert.deepStrictEqual(Object.keys(info.NetworkSettings.Networks), [SANDBOX_NETWORK])

        const exec = (command: string) => dockerCli("exec", name, "bash", "-c", command).stdout.trim()
        const expected = mask(ROOT_CAPABILITIES)
        assert.deepStrictEqual(privileges(exec("id -u; cat /proc/self/status")), {
          CapEff: expected,
          CapBnd: expected,
          NoNewPrivs: "1"
        })
        assert.strictEqual(exec("id -u"), "0")
        assert.strictEqual(exec(PACKET_SOCKET + " 2>&1"), "refused: Operation not permitted")

        // The owner reaches the victim's server over the bridge; its neighbour, root or not, does not.
        const alive = yield* Effect.promise(() =>
          fetch(`http://${victimIp}:8000/alive`, { signal: AbortSignal.timeout(5_000) }).then((r) => r.status)
        )
        assert.strictEqual(alive, 200)
        assert.strictEqual(exec(connectFrom(victimIp, 8000)), "blocked")

        yield* Effect.promise(() =>
          call(server.base, "POST", "/stop", {
            key,
            body: { runtime_id: (started.body as unknown as Started).runtime_id }
          })
        )
      }),
    240_000
  )

  it.live(
    "the isolated network is made once however many owners ask at once; one of that name that lets containers meet is refused and left alone",
    () =>
      Effect.gen(function*() {
        const name = `${NETWORK_PREFIX}${randomBytes(4).toString("hex")}`
        const ids = yield* Effect.all(Array.from({ length: 6 }, () => ensureIsolatedNetwork(name)), {
          concurrency: "unbounded"
        })
        assert.deepStrictEqual(networksNamed(name).map((id) => ids[0]!.startsWith(id)), [true])
        assert.deepStrictEqual(new Set(ids).size, 1)
        const made = yield* Effect.promise(() => docker.getNetwork(ids[0]!).inspect())
        assert.deepStrictEqual([made.Driver, made.Options?.[ICC_OPTION]], ["bridge", "false"])
        assert.strictEqual(yield* ensureIsolatedNetwork(name), ids[0])

        const open = `${NETWORK_PREFIX}${randomBytes(4).toString("hex")}`
        assert.strictEqual(dockerCli("network", "create", open).status, 0)
        const before = networksNamed(open)
        const refused = yield* Effect.flip(ensureIsolatedNetwork(open))
        assert.instanceOf(refused, RuntimeStartError)
        assert.strictEqual(
          refused.message,
          `The Docker network ${open} (${before[0]}) lets its containers reach each other (driver bridge, ` +
            `${ICC_OPTION} not "false"), so sandboxes on it could reach their neighbours. Remove it ` +
            `(docker network rm ${open}) and the next start makes it with inter-container communication off.`
        )
        assert.deepStrictEqual(networksNamed(open), before)
      }).pipe(Effect.provide(DockerEngine.layer)),
    60_000
  )
})
