/**
 * The Modal stand-in: Modal's control-plane gRPC service (`modal.client.ModalClient`, over HTTP/2
 * without TLS on 127.0.0.1, which the SDK's channel does for a `MODAL_SERVER_URL` of `http://...`),
 * for the calls ModalRuntime's flows make through the `modal` SDK (its default V2 sandboxes),
 * decoded with our trimmed copy of Modal's protobuf definitions (modal.proto). Sandboxes are Docker
 * containers (sandboxes.ts) reached through TLS tunnels on 127.0.0.1 (tunnels.ts). See README.md.
 */
import * as grpc from "@grpc/grpc-js"
import * as protoLoader from "@grpc/proto-loader"
import { Effect } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { docker, leftovers } from "./docker.ts"
import { type GenericResult, type SandboxDefinition, Sandboxes, type StandinSandbox } from "./sandboxes.ts"
import { makeCertificate, trustCertificate } from "./tunnels.ts"

export interface StandinOptions {
  /** The one token pair accepted (`x-modal-token-id` / `x-modal-token-secret`). */
  readonly tokenId: string
  readonly tokenSecret: string
  /** Published images (`images.fromName`): name (`:latest` when untagged) → image on the engine. */
  readonly images: Readonly<Record<string, string>>
}

/** A call as the SDK sent it: the method and its decoded request. */
export interface RecordedCall {
  readonly method: string
  readonly request: Record<string, unknown>
}

export interface Standin {
  /** The server URL for the SDK (`MODAL_SERVER_URL`, ModalRuntime's `serverUrl`). */
  readonly url: string
  readonly instance: string
  /** The tunnels' certificate (PEM), which a client other than this process (a browser) must be told to trust. */
  readonly certificate: string
  readonly calls: ReadonlyArray<RecordedCall>
  readonly sandboxes: ReadonlyMap<string, StandinSandbox>
  /** Answer the next `times` SandboxCreate calls with RESOURCE_EXHAUSTED and `details`. */
  readonly refuseCreates: (times: number, details: string) => void
  /** Ids of the containers this instance made that still exist. */
  readonly containers: () => Promise<Array<string>>
  readonly close: () => Promise<void>
}

/** A refusal: the gRPC status and Modal's text (its `details`). */
class Refusal extends Error {
  readonly code: grpc.status
  constructor(code: grpc.status, details: string) {
    super(details)
    this.code = code
  }
}

const definition = protoLoader.loadSync(join(import.meta.dirname, "modal.proto"), {
  keepCase: false,
  longs: Number,
  enums: Number,
  defaults: true,
  oneofs: true
})
const service = (grpc.loadPackageDefinition(definition) as unknown as {
  modal: { client: { ModalClient: { service: grpc.ServiceDefinition } } }
}).modal.client.ModalClient.service

const INVALID_TOKEN = "Token ID or secret is invalid. Create a new token with `modal token new`."
/** The image builder version every environment reports (the SDK sends it back with image builds). */
const BUILDER_VERSION = "2025.06"

const jwtPart = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url")
/** An unsigned JWT with an hour's `exp`: the SDK only decodes it to know when to fetch another. */
const authToken = () => `${jwtPart({ alg: "none" })}.${jwtPart({ exp: Math.floor(Date.now() / 1000) + 3600 })}.`

/** The tunnels of a sandbox as TunnelData (all on 127.0.0.1). */
const tunnelsOf = (sandbox: StandinSandbox) =>
  sandbox.tunnels.map((t) => ({ host: "127.0.0.1", port: t.port, containerPort: t.containerPort }))

/** A handler's failure as the call's status: a Refusal's code and text, anything else INTERNAL. */
const failure = (error: unknown): Partial<grpc.StatusObject> =>
  error instanceof Refusal
    ? { code: error.code, details: error.message }
    : { code: grpc.status.INTERNAL, details: String(error) }

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
  /** Published name with its tag (`name:latest` when given untagged) → image on the engine. */
  const published = new Map(
    Object.entries(options.images).map(([name, image]) => [name.includes(":") ? name : `${name}:latest`, image])
  )
  /** Image id → image on the engine. */
  const images = new Map<string, string>()
  const imageId = (engineImage: string) => {
    const id = `im-${createHash("sha256").update(engineImage).digest("hex").slice(0, 22)}`
    images.set(id, engineImage)
    return id
  }
  let refusals = { times: 0, details: "" }

  const sandboxOf = (id: string) => {
    const sandbox = sandboxes.byId.get(id)
    if (sandbox === undefined) throw new Refusal(grpc.status.NOT_FOUND, `Sandbox ${id} not found`)
    return sandbox
  }

  const handlers: Record<string, (request: any) => Promise<unknown>> = {
    AuthTokenGet: async () => ({ token: authToken() }),
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
    ImageGetByTag: async (request) => {
      const engineImage = published.get(request.tag)
      if (engineImage === undefined) {
        throw new Refusal(grpc.status.NOT_FOUND, `Could not find published image '${request.tag}'`)
      }
      return { imageId: imageId(engineImage) }
    },
    // Only `FROM <registry reference>`: the reference must name an image on the engine (nothing is pulled).
    ImageGetOrCreate: async (request) => {
      const commands: ReadonlyArray<string> = request.image?.dockerfileCommands ?? []
      const from = /^FROM (\S+)$/.exec(commands[0] ?? "")?.[1]
      if (commands.length !== 1 || from === undefined) {
        throw new Refusal(grpc.status.UNIMPLEMENTED, "the stand-in builds only images of one `FROM <reference>`")
      }
      const found = await docker.getImage(from).inspect().then(() => true, () => false)
      const id = imageId(from)
      return {
        imageId: id,
        result: found
          ? { status: 1 }
          : { status: 2, exception: `pull access denied for ${from}: repository does not exist` }
      }
    },
    ImagePublish: async (request) => {
      const engineImage = images.get(request.imageId)
      if (engineImage === undefined) throw new Refusal(grpc.status.NOT_FOUND, `Image ${request.imageId} not found`)
      published.set(request.tag, engineImage)
      return { imageId: request.imageId }
    },
    SandboxCreateV2: async (request) => {
      if (refusals.times > 0) {
        refusals = { ...refusals, times: refusals.times - 1 }
        throw new Refusal(grpc.status.RESOURCE_EXHAUSTED, refusals.details)
      }
      const sandboxDefinition = request.definition as SandboxDefinition
      const engineImage = images.get(sandboxDefinition.imageId)
      if (engineImage === undefined) {
        throw new Refusal(grpc.status.NOT_FOUND, `Image ${sandboxDefinition.imageId} not found`)
      }
      const sources: ReadonlyArray<{ readonly secretId: string; readonly env?: { readonly contents: object } }> =
        request.secretSources
      if (sources.some((source) => source.secretId !== "")) {
        throw new Refusal(grpc.status.UNIMPLEMENTED, "the stand-in takes environment variables, not named secrets")
      }
      const sandbox = await sandboxes.create({
        appId: request.appId,
        image: engineImage,
        env: Object.assign({}, ...sources.map((source) => source.env?.contents ?? {})),
        definition: sandboxDefinition,
        tags: tagRecord(request.tags)
      })
      return {
        sandboxId: sandbox.id,
        taskId: sandbox.taskId,
        tunnels: tunnelsOf(sandbox),
        metadata: { appId: sandbox.appId }
      }
    },
    SandboxGetTaskIdV2: async (request) => {
      const sandbox = sandboxOf(request.sandboxId)
      return { taskId: sandbox.taskId, ...(sandbox.result === undefined ? {} : { taskResult: sandbox.result }) }
    },
    SandboxGetTunnelsV2: async (request) => ({ tunnels: tunnelsOf(sandboxOf(request.sandboxId)) }),
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

  /** Every call: recorded, the token pair checked (UNAUTHENTICATED with Modal-like text), refusals as gRPC errors. */
  const authorized = (method: string, request: Record<string, unknown>, metadata: grpc.Metadata) => {
    calls.push({ method, request })
    if (
      metadata.get("x-modal-token-id")[0] !== options.tokenId ||
      metadata.get("x-modal-token-secret")[0] !== options.tokenSecret
    ) {
      throw new Refusal(grpc.status.UNAUTHENTICATED, INVALID_TOKEN)
    }
  }

  const implementation: grpc.UntypedServiceImplementation = {}
  for (const [method, handle] of Object.entries(handlers)) {
    implementation[method] = (call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) => {
      Promise.resolve()
        .then(() => authorized(method, call.request, call.metadata))
        .then(() => handle(call.request))
        .then((response) => callback(null, response), (error) => callback(failure(error)))
    }
  }

  const server = new grpc.Server()
  server.addService(service, implementation)
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      "127.0.0.1:0",
      grpc.ServerCredentials.createInsecure(),
      (error, bound) => error === null ? resolve(bound) : reject(error)
    )
  )
  return {
    url: `http://127.0.0.1:${port}`,
    instance,
    certificate: certificate.cert,
    calls,
    sandboxes: sandboxes.byId,
    refuseCreates: (times, details) => void (refusals = { times, details }),
    containers: () => leftovers(instance),
    close: async () => {
      server.forceShutdown()
      await sandboxes.closeAll()
    }
  }
}

/** The stand-in as a scoped resource: closed (every container removed) with the scope. */
export const standin = (options: StandinOptions) =>
  Effect.acquireRelease(Effect.promise(() => startStandin(options)), (s) => Effect.promise(() => s.close()))
