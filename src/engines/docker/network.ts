/**
 * The network every sandbox container joins (unless the operator asks for the host's): one bridge of
 * ours, `effect-sandbox`, made with inter-container communication off. Its containers reach the
 * internet and are reached from the host (the owner's client on a local engine, docker-proxy for the
 * ports published on 127.0.0.1), but not from each other: the engine drops every packet forwarded
 * from one of its ports to another (an iptables rule on the bridge, through br_netfilter; an engine
 * that cannot load it refuses to make the network). Why one shared bridge and not one per sandbox:
 * docs/design-notes.md, "Neighbours on one bridge" (Docker's default address pools hold 31 bridges
 * in all, and a network per sandbox costs every start a network create and every release a removal).
 *
 * The network is made the first time a sandbox needs it and kept, as the runtime images are:
 * `docker network rm effect-sandbox` when no container uses it removes it, and the next start makes
 * it again.
 */
import type Docker from "dockerode"
import { Effect, Semaphore } from "effect"
import { type ProviderError, RuntimeStartError } from "../../schema/errors.ts"
import type { SandboxConfig } from "../../schema/SandboxConfig.ts"
import { statusOf } from "./classify.ts"
import { dockerClient } from "./client.ts"
import { type DockerEngine, engineCall } from "./engine.ts"
import { LABEL } from "./labels.ts"

/** The name of the sandboxes' network. */
export const SANDBOX_NETWORK = "effect-sandbox"

/** The bridge driver's option that, set to "false", drops traffic between the bridge's containers. */
export const ICC_OPTION = "com.docker.network.bridge.enable_icc"

const created = (network: Docker.NetworkInspectInfo) => Date.parse(network.Created)

/** Networks named exactly `name` (the engine's name filter matches parts of names), oldest first. */
const networksNamed = (name: string) =>
  Effect.gen(function*() {
    const docker = yield* dockerClient
    const found = yield* engineCall(
      `list the networks named ${name}`,
      () => docker.listNetworks({ filters: { name: [name] } })
    )
    return found.filter((n) => n.Name === name).sort((a, b) =>
      created(a) === created(b) ? a.Id.localeCompare(b.Id) : created(a) - created(b)
    )
  })

/** Make the network; a 409 (another owner made it first) is not an error. Returns the new id, if any. */
const createNetwork = (name: string) =>
  Effect.gen(function*() {
    const docker = yield* dockerClient
    return yield* Effect.tryPromise({
      try: () =>
        docker.createNetwork({
          Name: name,
          Driver: "bridge",
          CheckDuplicate: true,
          Options: { [ICC_OPTION]: "false" },
          Labels: { [LABEL.managed]: "true" }
        }).then((network) => network.id as string | undefined),
      catch: (cause) => cause
    }).pipe(
      Effect.catch((cause) =>
        statusOf(cause) === 409 ? Effect.succeed(undefined) : Effect.fail(
          new RuntimeStartError({
            message: `Docker: cannot create the network ${name} (inter-container communication off): ${
              (cause as Error).message ?? cause
            }`
          })
        )
      )
    )
  })

/** A network of that name made by someone else, or with its containers able to reach each other: refused. */
const checkIsolated = (network: Docker.NetworkInspectInfo) =>
  network.Driver === "bridge" && network.Options?.[ICC_OPTION] === "false"
    ? Effect.void
    : Effect.fail(
      new RuntimeStartError({
        message:
          `The Docker network ${network.Name} (${
            network.Id.slice(0, 12)
          }) lets its containers reach each other (driver ${network.Driver}, ${ICC_OPTION} not "false"), ` +
          `so sandboxes on it could reach their neighbours. Remove it (docker network rm ${network.Name}) ` +
          `and the next start makes it with inter-container communication off.`
      })
    )

/**
 * One maker at a time in this process: owners here then find what the first made, and the engine's
 * non-atomic duplicate check (below) is left to owners in other processes, whose lists can lag.
 */
const making = Semaphore.makeUnsafe(1)

/**
 * The bridge network `name` with inter-container communication off, made if missing; its id (which
 * `NetworkMode` takes: a name two networks share is ambiguous to the engine). Two owners making it at
 * the same moment can both succeed (the engine's duplicate check is not atomic): each then uses the
 * oldest, and the one that made another removes its own, which no container has joined yet.
 */
export const ensureIsolatedNetwork = (
  name: string
): Effect.Effect<string, ProviderError | RuntimeStartError, DockerEngine> =>
  making.withPermit(Effect.gen(function*() {
    const existing = yield* networksNamed(name)
    if (existing[0] !== undefined) {
      yield* checkIsolated(existing[0])
      return existing[0].Id
    }
    const made = yield* createNetwork(name)
    const chosen = (yield* networksNamed(name))[0]
    if (chosen === undefined) {
      return yield* new RuntimeStartError({ message: `Docker: the network ${name} vanished as it was made` })
    }
    if (made !== undefined && made !== chosen.Id) {
      const docker = yield* dockerClient
      yield* Effect.promise(() => docker.getNetwork(made).remove().catch(() => undefined))
    }
    yield* checkIsolated(chosen)
    return chosen.Id
  })).pipe(Effect.withSpan("docker.ensureIsolatedNetwork", { attributes: { name } }))

/** The network a sandbox joins: the host's when the operator opted out (`useHostNetwork`), else ours. */
export const sandboxNetworkFor = (
  sandbox: SandboxConfig
): Effect.Effect<string, ProviderError | RuntimeStartError, DockerEngine> =>
  sandbox.useHostNetwork ? Effect.succeed("host") : ensureIsolatedNetwork(SANDBOX_NETWORK)
