/**
 * The Modal stand-in: Modal's control-plane gRPC service (`modal.client.ModalClient`, over HTTP/2
 * without TLS on 127.0.0.1, which the SDK's channel does for a `MODAL_SERVER_URL` of `http://...`),
 * for the calls ModalRuntime's flows make through the `modal` SDK (its default V2 sandboxes),
 * decoded with our trimmed copy of Modal's protobuf definitions (modal.proto). Sandboxes are Docker
 * containers (sandboxes.ts) reached through TLS tunnels on 127.0.0.1 (tunnels.ts). See README.md.
 *
 * Where Modal's public sources leave a rule open, the stand-in takes the reading less favourable to
 * the runtime: `SandboxListV2` does not list the V2 sandboxes `SandboxCreateV2` makes (the SDK's
 * `experimentalCreate` docs say so, its `experimentalList` docs say the opposite) unless a test sets
 * `listsV2`; tunnels, logs and refusals can come late or not at all (`holdTunnels`, `lateLogsMs`,
 * `faults`).
 */
import * as grpc from "@grpc/grpc-js"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { isIP } from "node:net"
import { setTimeout as sleep } from "node:timers/promises"
import { Faults } from "../faults.ts"
import { type Handler, type RecordedCall, Refusal, serve, unsignedJwt } from "./calls.ts"
import { docker, leftovers } from "./docker.ts"
import { Images } from "./images.ts"
import { startRouter } from "./router.ts"
import { type GenericResult, type SandboxDefinition, Sandboxes, type StandinSandbox, STATUS } from "./sandboxes.ts"
import { makeCertificate, trustCertificate } from "./tunnels.ts"

export interface StandinOptions {
  /** The one token pair accepted (`x-modal-token-id` / `x-modal-token-secret`). */
  readonly tokenId: string
  readonly tokenSecret: string
  /** Published images (`images.fromName`): name (`:latest` when untagged) → image on the engine. */
  readonly images: Readonly<Record<string, string>>
}

export type { RecordedCall } from "./calls.ts"

export interface Standin {
  /** The server URL for the SDK (`MODAL_SERVER_URL`, ModalRuntime's `serverUrl`). */
  readonly url: string
  readonly instance: string
  /** The tunnels' certificate (PEM), which a client other than this process (a browser) must be told to trust. */
  readonly certificate: string
  readonly calls: ReadonlyArray<RecordedCall>
  readonly sandboxes: ReadonlyMap<string, StandinSandbox>
  /** The images: published names, snapshot images (images.ts). */
  readonly images: Images
  /** Answer the next `times` SandboxCreate calls with RESOURCE_EXHAUSTED and `details`. */
  readonly refuseCreates: (times: number, details: string) => void
  /**
   * What the next matching calls meet (test/providers/faults.ts), matched on the method's name as
   * the path (`SandboxCreateV2`): a status as gRPC's (429 RESOURCE_EXHAUSTED, 500 INTERNAL, 502/503/504
   * UNAVAILABLE, gRPC has no Retry-After), a delay or hold before serving, a cut of the HTTP/2
   * connection after serving (the worse case: the work done, its answer lost).
   */
  readonly faults: Faults
  /** Whether `SandboxListV2` lists V2 sandboxes (default false: the unfavourable reading). */
  listsV2: boolean
  /**
   * Tunnels come late: while `until` is pending, a create answers without them and
   * `SandboxGetTunnelsV2` holds until they come, at most its `timeout` and `capSeconds` (Modal's own
   * long-poll limit), then answers TIMEOUT.
   */
  readonly holdTunnels: (until: Promise<unknown>, capSeconds?: number) => void
  /** Logs come late: a task's logs are fetched only this long after its sandbox ended (default 0). */
  lateLogsMs: number
  /** End a sandbox as Modal would on its own: its idle timeout, or evicted for its memory (OOM). */
  readonly end: (sandboxId: string, why: "idle-timeout" | "out-of-memory") => Promise<void>
  /** Ids of the containers this instance made that still exist. */
  readonly containers: () => Promise<Array<string>>
  readonly close: () => Promise<void>
}

/** An IPv4 or IPv6 block (`a.b.c.d/n`), as Modal's allowlists take them. */
const isCidr = (text: string) => {
  const [address = "", prefix = ""] = text.split("/")
  const family = isIP(address)
  return family !== 0 && /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128)
}

const INVALID_TOKEN = "Token ID or secret is invalid. Create a new token with `modal token new`."
/** The image builder version every environment reports (the SDK sends it back with image builds). */
const BUILDER_VERSION = "2025.06"

/** The tunnels of a sandbox as TunnelData (all on 127.0.0.1). */
const tunnelsOf = (sandbox: StandinSandbox) =>
  sandbox.tunnels.map((t) => ({ host: "127.0.0.1", port: t.port, containerPort: t.containerPort }))

type Tags = ReadonlyArray<{ readonly tagName: string; readonly tagValue: string }>
const tagRecord = (tags: Tags) => Object.fromEntries(tags.map((t) => [t.tagName, t.tagValue]))
const tagList = (tags: Readonly<Record<string, string>>) =>
  Object.entries(tags).map(([tagName, tagValue]) => ({ tagName, tagValue }))

/** Resolves after `seconds`, or with `promise` if it settles first. */
const within = <A>(promise: Promise<A>, seconds: number): Promise<A | undefined> =>
  Promise.race([promise, sleep(seconds * 1000, undefined, { ref: false })])

export const startStandin = async (options: StandinOptions): Promise<Standin> => {
  const instance = randomBytes(4).toString("hex")
  const certificate = makeCertificate()
  trustCertificate(certificate)
  const sandboxes = new Sandboxes(instance, certificate)
  const calls: Array<RecordedCall> = []
  const apps = new Map<string, string>()
  const images = new Images(instance, options.images)
  let refusals = { times: 0, details: "" }
  const faults = new Faults()
  const router = await startRouter({
    sandboxOfTask: (taskId) => [...sandboxes.byId.values()].find((s) => s.taskId === taskId),
    images,
    calls,
    faults
  })
  let tunnelsHeld: { readonly until: Promise<unknown>; readonly capSeconds: number } | undefined
  const state = { listsV2: false, lateLogsMs: 0 }
  /** App name → id, for lookups by name. */
  const appIdOf = (name: string) => apps.get(name)

  const sandboxOf = (id: string) => {
    const sandbox = sandboxes.byId.get(id)
    if (sandbox === undefined) throw new Refusal(grpc.status.NOT_FOUND, `Sandbox ${id} not found`)
    return sandbox
  }

  /** Create answers by the SDK's `x-idempotency-key`: a create sent again (its answer lost) makes nothing new. */
  const createdBy = new Map<string, unknown>()

  const handlers: Record<string, Handler> = {
    AuthTokenGet: async () => ({ token: unsignedJwt() }),
    AppGetOrCreate: async (request) => {
      const known = apps.get(request.appName)
      if (known !== undefined) return { appId: known }
      if (request.objectCreationType !== 1) {
        throw new Refusal(grpc.status.NOT_FOUND, `App '${request.appName}' not found`)
      }
      const appId = `ap-${randomBytes(11).toString("hex")}`
      apps.set(request.appName, appId)
      return { appId }
    },
    EnvironmentGetOrCreate: async (request) => ({
      environmentId: "en-standin",
      metadata: { name: request.deploymentName || "main", settings: { imageBuilderVersion: BUILDER_VERSION } }
    }),
    ImageGetByTag: async (request) => ({ imageId: images.byName(request.tag) }),
    // Only `FROM <registry reference>`: the reference must name an image on the engine (nothing is pulled).
    ImageGetOrCreate: async (request) => {
      const commands: ReadonlyArray<string> = request.image?.dockerfileCommands ?? []
      const from = /^FROM (\S+)$/.exec(commands[0] ?? "")?.[1]
      if (commands.length !== 1 || from === undefined) {
        throw new Refusal(grpc.status.UNIMPLEMENTED, "the stand-in builds only images of one `FROM <reference>`")
      }
      const found = await docker.getImage(from).inspect().then(() => true, () => false)
      const id = images.idOf(from)
      return {
        imageId: id,
        result: found
          ? { status: 1 }
          : { status: 2, exception: `pull access denied for ${from}: repository does not exist` }
      }
    },
    ImagePublish: async (request) => {
      images.publish(request.tag, request.imageId)
      return { imageId: request.imageId }
    },
    ImageFromId: async (request) => ({ imageId: images.fromId(request.imageId) }),
    ImageDelete: async (request) => {
      await images.delete(request.imageId)
      return {}
    },
    ImageListTags: async (request) => images.list(request.tagPrefix, request.maxObjects, request.pageToken),
    ImageNameDelete: async (request) => {
      images.deleteName(request.tag)
      return {}
    },
    // A running sandbox's command router (router.ts): its URL and a JWT of its task.
    SandboxGetCommandRouterAccess: async (request) => {
      const sandbox = sandboxOf(request.sandboxId ?? "")
      if (sandbox.result !== undefined) {
        throw new Refusal(grpc.status.FAILED_PRECONDITION, `Sandbox ${sandbox.id} has finished`)
      }
      return router.access(sandbox)
    },
    SandboxCreateV2: async (request, key?: string) => {
      const again = key === undefined ? undefined : createdBy.get(key)
      if (again !== undefined) return again
      if (refusals.times > 0) {
        refusals = { ...refusals, times: refusals.times - 1 }
        throw new Refusal(grpc.status.RESOURCE_EXHAUSTED, refusals.details)
      }
      const sandboxDefinition = request.definition as SandboxDefinition
      const engineImage = images.engineImage(sandboxDefinition.imageId)
      if (engineImage === undefined) {
        throw new Refusal(grpc.status.NOT_FOUND, `Image ${sandboxDefinition.imageId} not found`)
      }
      const badCidr = sandboxDefinition.networkAccess?.allowedCidrs.find((cidr) => !isCidr(cidr))
      if (badCidr !== undefined) {
        throw new Refusal(grpc.status.INVALID_ARGUMENT, `Invalid CIDR in outbound allowlist: ${badCidr}`)
      }
      const sources: ReadonlyArray<{ readonly secretId: string; readonly env?: { readonly contents: object } }> =
        request.secretSources
      if (sources.some((source) => source.secretId !== "")) {
        throw new Refusal(grpc.status.UNIMPLEMENTED, "the stand-in takes environment variables, not named secrets")
      }
      const name = sandboxDefinition.name ?? undefined
      if (
        name !== undefined && name !== "" &&
        [...sandboxes.byId.values()].some((s) =>
          s.appId === request.appId && s.result === undefined && s.definition.name === name
        )
      ) {
        throw new Refusal(grpc.status.ALREADY_EXISTS, `Sandbox with name '${name}' already exists in this App`)
      }
      const sandbox = await sandboxes.create({
        appId: request.appId,
        image: engineImage,
        env: Object.assign({}, ...sources.map((source) => source.env?.contents ?? {})),
        definition: sandboxDefinition,
        tags: tagRecord(request.tags)
      })
      const answer = {
        sandboxId: sandbox.id,
        taskId: sandbox.taskId,
        tunnels: tunnelsHeld === undefined ? tunnelsOf(sandbox) : [],
        metadata: { appId: sandbox.appId }
      }
      if (key !== undefined) createdBy.set(key, answer)
      return answer
    },
    // V2 names: the running sandbox of that name in the app.
    SandboxGetFromNameV2: async (request) => {
      const appId = appIdOf(request.appName)
      const sandbox = [...sandboxes.byId.values()].find((s) =>
        s.appId === appId && s.result === undefined && s.definition.name === request.sandboxName
      )
      if (sandbox === undefined) {
        throw new Refusal(grpc.status.NOT_FOUND, `Sandbox with name '${request.sandboxName}' not found`)
      }
      return { sandboxId: sandbox.id, metadata: { appId: sandbox.appId } }
    },
    // V1 names: the stand-in makes no V1 sandboxes.
    SandboxGetFromName: async (request) => {
      throw new Refusal(grpc.status.NOT_FOUND, `Sandbox with name '${request.sandboxName}' not found`)
    },
    SandboxGetTaskIdV2: async (request) => {
      const sandbox = sandboxOf(request.sandboxId)
      return { taskId: sandbox.taskId, ...(sandbox.result === undefined ? {} : { taskResult: sandbox.result }) }
    },
    SandboxGetTunnelsV2: async (request) => {
      const sandbox = sandboxOf(request.sandboxId)
      const held = tunnelsHeld
      if (held !== undefined) {
        const wait = Math.min(request.timeout || 50, held.capSeconds)
        const came = await within(held.until.then(() => true, () => true), wait)
        if (came !== true) return { result: { status: STATUS.timeout, exception: "", exitcode: 0 }, tunnels: [] }
      }
      return { tunnels: tunnelsOf(sandbox) }
    },
    SandboxWaitV2: async (request) => {
      const sandbox = sandboxOf(request.sandboxId)
      const result: GenericResult | undefined = sandbox.result === undefined
        ? await within(sandbox.ended, request.timeout)
        : sandbox.result
      return { ...(result === undefined ? {} : { result }), metadata: { appId: sandbox.appId } }
    },
    SandboxTerminateV2: async (request) => {
      const existing = await sandboxes.terminate(sandboxOf(request.sandboxId))
      return existing === undefined ? {} : { existingResult: existing }
    },
    SandboxListV2: async (request) => {
      const wanted = tagRecord(request.tags)
      const listed = [...sandboxes.byId.values()]
        .filter((s) =>
          state.listsV2 &&
          (request.includeFinished || s.result === undefined) &&
          (request.appId === "" || s.appId === request.appId) &&
          (request.beforeTimestamp === 0 || s.createdAt < request.beforeTimestamp) &&
          Object.entries(wanted).every(([k, v]) => s.tags[k] === v)
        )
        .sort((a, b) => b.createdAt - a.createdAt)
      return {
        sandboxes: listed.map((s) => ({ id: s.id, createdAt: s.createdAt, appId: s.appId, tags: tagList(s.tags) }))
      }
    },
    SandboxTagsGetV2: async (request) => ({ tags: tagList(sandboxOf(request.sandboxId).tags) }),
    // A sandbox's whole output (what the SDK's `logs.tail` asks of the last minutes, naming its task), its last `limit` lines.
    AppFetchLogs: async (request) => {
      const sandbox = [...sandboxes.byId.values()].find((s) => s.taskId === request.taskId)
      if (sandbox === undefined) throw new Refusal(grpc.status.NOT_FOUND, `Task ${request.taskId} not found`)
      if (state.lateLogsMs > 0 && !(Date.now() - (sandbox.endedAt ?? Infinity) >= state.lateLogsMs)) {
        return { batches: [] }
      }
      const streams = request.source === 1
        ? ["stdout"] as const
        : request.source === 2
        ? ["stderr"] as const
        : ["stdout", "stderr"] as const
      const items = streams.flatMap((name) =>
        sandbox.output[name].split(/(?<=\n)/).filter((line) => line !== "").map((data) => ({
          data,
          timestamp: sandbox.createdAt,
          fileDescriptor: name === "stdout" ? 1 : 2
        }))
      )
      return { batches: [{ taskId: sandbox.taskId, items: items.slice(-(request.limit || items.length)) }] }
    }
  }

  /** The token pair every control-plane call carries (UNAUTHENTICATED with Modal-like text). */
  const authorize = (metadata: grpc.Metadata) => {
    if (
      metadata.get("x-modal-token-id")[0] !== options.tokenId ||
      metadata.get("x-modal-token-secret")[0] !== options.tokenSecret
    ) {
      throw new Refusal(grpc.status.UNAUTHENTICATED, INVALID_TOKEN)
    }
  }
  const served = await serve({
    proto: "modal.proto",
    service: "modal.client.ModalClient",
    handlers,
    calls,
    authorize,
    faults,
    unfaulted: ["AuthTokenGet"]
  })
  return {
    url: `http://127.0.0.1:${served.port}`,
    instance,
    certificate: certificate.cert,
    calls,
    sandboxes: sandboxes.byId,
    images,
    refuseCreates: (times, details) => void (refusals = { times, details }),
    faults,
    get listsV2() {
      return state.listsV2
    },
    set listsV2(value) {
      state.listsV2 = value
    },
    holdTunnels: (until, capSeconds = Infinity) => {
      const held = { until, capSeconds }
      tunnelsHeld = held
      void until.then(() => undefined, () => undefined).then(() => {
        if (tunnelsHeld === held) tunnelsHeld = undefined
      })
    },
    get lateLogsMs() {
      return state.lateLogsMs
    },
    set lateLogsMs(value) {
      state.lateLogsMs = value
    },
    end: (sandboxId, why) => sandboxes.end(sandboxOf(sandboxId), why),
    containers: () => leftovers(instance),
    close: async () => {
      served.close()
      router.close()
      await sandboxes.closeAll()
      await images.close()
    }
  }
}

/** The stand-in as a scoped resource: closed (every container removed) with the scope. */
export const standin = (options: StandinOptions) =>
  Effect.acquireRelease(Effect.promise(() => startStandin(options)), (s) => Effect.promise(() => s.close()))
