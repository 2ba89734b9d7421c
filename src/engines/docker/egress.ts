/**
 * A Docker sandbox whose egress is restricted (`network` option, src/network/policy.ts): enforced by
 * the engine, out of the sandbox's reach. The sandbox joins a network of its own, `<name>-egress`,
 * made `internal` (no route out) and with no address of the host on it (`inhibit_ipv4`: the sandbox
 * cannot reach the host's own services either). Its one neighbour there is its gateway container,
 * `<name>-egress`, which is also on the sandboxes' bridge (network.ts): it forwards the ports the
 * host publishes (server, VS Code, apps: published on the gateway, since the engine publishes
 * nothing of an internal network) and, for an allow list, runs the egress proxy
 * (src/network/egressProxy.ts) the sandbox is pointed at by HTTP(S)_PROXY. The sandbox's resolver
 * (the engine's embedded DNS) forwards to an address that routes nowhere from its namespace, so
 * names resolve only through the proxy. Both are removed with the sandbox (`removeEgress`), and a
 * gateway left without its sandbox is reaped (`reapStrayGateways`).
 */
import type Docker from "dockerode"
import { Duration, Effect } from "effect"
import { pack } from "tar-stream"
import type { GatewayConfig } from "../../network/gatewayMain.ts"
import type { BoundSecret } from "../../network/injection.ts"
import type { EgressPolicy } from "../../network/policy.ts"
import { containerUser } from "../../runtimeImage/sandboxUser.ts"
import { type ProviderError, RuntimeStartError } from "../../schema/errors.ts"
import { statusOf } from "./classify.ts"
import { dockerClient } from "./client.ts"
import { publishedPorts, removeContainer } from "./container.ts"
import { IMAGE_NODE } from "./containerSpec.ts"
import { type DockerEngine, engineCall } from "./engine.ts"
import { ensureIsolatedNetwork, SANDBOX_NETWORK } from "./network.ts"

/** The gateway's script in the runtime image (scripts/build-payload.ts bundles it). */
export const IMAGE_GATEWAY = "/opt/effect-sandbox/payload/egress-proxy.mjs"
/** The egress proxy's port on the gateway. */
export const PROXY_PORT = 3128
/**
 * The label that marks a sandbox's gateway and its network, valued with the sandbox's container
 * name (a gateway is reaped only once no container of that name is left).
 */
export const EGRESS_OF = "effect-sandbox.egress-of"
/**
 * The upstream the sandbox's embedded DNS forwards to: TEST-NET-1 (RFC 5737), which routes nowhere,
 * dialled from the sandbox's own namespace. Without it the engine forwards to the host's resolver,
 * from the host's namespace when that is a loopback one: a DNS tunnel around the policy.
 */
export const NO_RESOLVER = "192.0.2.1"

/**
 * Where the gateway's bound secrets are (the `secrets` option): a file copied into the gateway
 * before it starts, owned by its user and readable by it only. Not its command line nor its
 * environment, which `docker inspect` shows to anyone who can list containers; the file is read by
 * Docker API users only (`docker cp`), who own the engine anyway. It stays for the gateway's restarts.
 */
const SECRETS_DIR = "/tmp"
const SECRETS_NAME = ".effect-sandbox-egress-secrets"

/** Copy the bound secrets into the created gateway, readable by `uid` only. */
const putSecrets = (gateway: Docker.Container, secrets: ReadonlyArray<BoundSecret>, uid: number) => {
  const tar = pack()
  tar.entry({ name: SECRETS_NAME, mode: 0o400, uid, gid: uid }, JSON.stringify(secrets))
  tar.finalize()
  return engineCall(
    "copy the bound secrets into the gateway",
    () => gateway.putArchive(tar as unknown as NodeJS.ReadableStream, { path: SECRETS_DIR })
  )
}

/** The network's and the gateway's name for the sandbox container `name`. */
export const egressName = (name: string) => `${name}-egress`

/** What the sandbox container takes from its egress: its network, resolver and environment. */
export interface SandboxEgress {
  readonly network: string
  readonly env: Readonly<Record<string, string>>
  readonly gateway: Docker.Container
}

/** The proxy variables every common client reads (curl, pip, git, requests; Node 24's fetch with NODE_USE_ENV_PROXY). */
const proxyEnv = (url: string): Record<string, string> => ({
  HTTP_PROXY: url,
  HTTPS_PROXY: url,
  http_proxy: url,
  https_proxy: url,
  ALL_PROXY: url,
  all_proxy: url,
  NO_PROXY: "localhost,127.0.0.1,::1",
  no_proxy: "localhost,127.0.0.1,::1",
  NODE_USE_ENV_PROXY: "1"
})

const refused = (what: string) => (cause: unknown) =>
  new RuntimeStartError({ message: `Docker: cannot ${what}: ${(cause as Error).message ?? cause}` })

/**
 * The sandbox's internal network and its gateway, made and started before the sandbox (whose
 * environment names the gateway's address). A failure removes what was made.
 */
export const makeEgress = Effect.fn("docker.makeEgress")(function*(input: {
  readonly name: string
  readonly image: string
  readonly policy: EgressPolicy
  readonly ports: ReadonlyArray<number>
  readonly userId: number
  /** Secrets the proxy puts on requests to their hosts (an allow list's only). */
  readonly secrets: ReadonlyArray<BoundSecret>
  /** The sandbox's variables that hold their placeholders. */
  readonly placeholders: Readonly<Record<string, string>>
}) {
  const docker = yield* dockerClient
  const name = egressName(input.name)
  const labels = { [EGRESS_OF]: input.name }
  const outside = yield* ensureIsolatedNetwork(SANDBOX_NETWORK)
  const made = Effect.gen(function*() {
    const network = yield* Effect.tryPromise({
      try: () =>
        docker.createNetwork({
          Name: name,
          Driver: "bridge",
          Internal: true,
          CheckDuplicate: true,
          Options: { "com.docker.network.bridge.inhibit_ipv4": "true" },
          Labels: labels
        }),
      catch: refused(`create the sandbox's internal network ${name}`)
    })
    const config: GatewayConfig = {
      sandbox: input.name,
      ports: input.ports,
      ...(input.policy._tag === "AllowOnly"
        ? {
          proxy: {
            port: PROXY_PORT,
            rules: input.policy.rules,
            ...(input.secrets.length === 0 ? {} : { secretsFile: `${SECRETS_DIR}/${SECRETS_NAME}` })
          }
        }
        : {})
    }
    const gateway = yield* engineCall(`create the gateway ${name}`, () =>
      docker.createContainer({
        name,
        Image: input.image,
        Entrypoint: [],
        Cmd: [IMAGE_NODE, IMAGE_GATEWAY, JSON.stringify(config)],
        User: containerUser(input.userId),
        Labels: labels,
        ExposedPorts: Object.fromEntries(input.ports.map((p) => [`${p}/tcp`, {}])),
        HostConfig: {
          Init: true,
          NetworkMode: outside,
          PortBindings: Object.fromEntries(
            input.ports.map((p) => [`${p}/tcp`, [{ HostIp: "127.0.0.1", HostPort: "" }]])
          ),
          CapDrop: ["ALL"],
          SecurityOpt: ["no-new-privileges"],
          Memory: 256 * 1024 ** 2,
          PidsLimit: 64
        }
      }))
    yield* engineCall(
      `connect the gateway ${name} to its sandbox's network`,
      () => network.connect({ Container: gateway.id })
    )
    if (input.secrets.length > 0) yield* putSecrets(gateway, input.secrets, input.userId)
    yield* engineCall(`start the gateway ${name}`, () => gateway.start())
    const info = yield* engineCall(`inspect the gateway ${name}`, () => gateway.inspect())
    const address = info.NetworkSettings.Networks?.[name]?.IPAddress ?? ""
    if (address === "") return yield* refused(`read the gateway's address`)("it has none on " + name)
    const env = input.policy._tag === "AllowOnly"
      ? { ...proxyEnv(`http://${address}:${PROXY_PORT}`), ...input.placeholders }
      : {}
    return { network: network.id as string, env, gateway } satisfies SandboxEgress
  })
  return yield* made.pipe(Effect.tapError(() => removeEgress(input.name)))
})

/**
 * The sandbox's create options put behind its egress: on its internal network only, its resolver
 * forwarding nowhere, the proxy's variables set; nothing published (the gateway publishes).
 */
export const behindEgress = (
  options: Docker.ContainerCreateOptions,
  egress: SandboxEgress
): Docker.ContainerCreateOptions => {
  const { PortBindings: _published, ...host } = options.HostConfig ?? {}
  return {
    ...options,
    Env: [...(options.Env ?? []), ...Object.entries(egress.env).map(([k, v]) => `${k}=${v}`)],
    HostConfig: { ...host, NetworkMode: egress.network, Dns: [NO_RESOLVER], DnsSearch: [], DnsOptions: [] }
  }
}

/** The host ports the gateway of `name` publishes, by container port; undefined when it has none. */
export const gatewayPorts = (name: string): Effect.Effect<Record<number, number> | undefined, never, DockerEngine> =>
  Effect.gen(function*() {
    const docker = yield* dockerClient
    const info = yield* Effect.promise(() => docker.getContainer(egressName(name)).inspect().catch(() => undefined))
    return info === undefined ? undefined : publishedPorts(info)
  })

/** Start the gateway of `name` again (after its sandbox was stopped and is started). */
export const startGateway = (name: string): Effect.Effect<void, ProviderError, DockerEngine> =>
  Effect.gen(function*() {
    const docker = yield* dockerClient
    yield* engineCall(`start the gateway ${egressName(name)}`, () =>
      docker.getContainer(egressName(name)).start().catch((e) =>
        statusOf(e) === 304 ? undefined : Promise.reject(e)
      ))
  })

/** Remove the gateway and network of the sandbox `name`; either gone already is no failure. */
export const removeEgress = (name: string): Effect.Effect<void, never, DockerEngine> =>
  Effect.gen(function*() {
    const docker = yield* dockerClient
    yield* removeContainer(docker.getContainer(egressName(name)))
    yield* Effect.promise(() =>
      docker.getNetwork(egressName(name)).remove().catch((e) => statusOf(e) === 404 ? undefined : e)
    )
  })

/**
 * A gateway older than `grace` whose sandbox is gone (its owner died between the two removals):
 * removed with its network. The grace covers a start in progress, which makes the gateway first.
 */
export const reapStrayGateways = (grace: Duration.Input = "2 minutes") =>
  Effect.gen(function*() {
    const docker = yield* dockerClient
    const gateways = yield* Effect.promise(() =>
      docker.listContainers({ all: true, filters: { label: [EGRESS_OF] } }).catch(() => [])
    )
    if (gateways.length === 0) return 0
    const names = new Set(
      (yield* Effect.promise(() => docker.listContainers({ all: true }).catch(() => []))).flatMap((c) =>
        c.Names.map((n) => n.replace(/^\//, ""))
      )
    )
    const oldest = Date.now() / 1000 - Duration.toSeconds(Duration.fromInputUnsafe(grace))
    const strays = gateways.filter((g) => {
      const of = g.Labels[EGRESS_OF] ?? ""
      return of !== "" && g.Names[0] === `/${egressName(of)}` && !names.has(of) && g.Created < oldest
    })
    yield* Effect.forEach(strays, (g) => removeEgress(g.Labels[EGRESS_OF]!), { discard: true })
    return strays.length
  })
