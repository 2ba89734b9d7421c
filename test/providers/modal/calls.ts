/**
 * How the Modal stand-in serves a gRPC call, for both of its services (the control plane, server.ts,
 * and a sandbox's command router, router.ts): recorded, authorized by the service's own check, met
 * by a fault where a test injected one (test/providers/faults.ts, matched on the method's name),
 * then served; a handler's `Refusal` is the call's gRPC status with Modal's text.
 */
import * as grpc from "@grpc/grpc-js"
import * as protoLoader from "@grpc/proto-loader"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import type { Fault, Faults } from "../faults.ts"

/**
 * The service `service` (`package.Service`) of one of the stand-in's trimmed .proto files, decoded
 * as its handlers expect: camelCase, numbers for longs and enums, defaults filled, oneofs named.
 */
const loadService = (file: string, service: string): grpc.ServiceDefinition => {
  const definition = protoLoader.loadSync(join(import.meta.dirname, file), {
    keepCase: false,
    longs: Number,
    enums: Number,
    defaults: true,
    oneofs: true
  })
  const found = service.split(".").reduce<any>((at, part) => at?.[part], grpc.loadPackageDefinition(definition))
  return found.service
}

/** A refusal: the gRPC status and Modal's text (its `details`). */
export class Refusal extends Error {
  readonly code: grpc.status
  constructor(code: grpc.status, details: string) {
    super(details)
    this.code = code
  }
}

/** A call as the SDK sent it: the method and its decoded request. */
export interface RecordedCall {
  readonly method: string
  readonly request: Record<string, unknown>
}

/** A handler: the decoded request (and the SDK's idempotency key) to the answer. */
export type Handler = (request: any, idempotencyKey?: string) => Promise<unknown>

/**
 * A server-streaming handler: the decoded request to its messages, read while the call is open
 * (`signal` aborts when the client cancels it).
 */
export type StreamHandler = (request: any, signal: AbortSignal) => AsyncIterable<unknown>

/** A handler's failure as the call's status: a Refusal's code and text, anything else INTERNAL. */
const failure = (error: unknown): Partial<grpc.StatusObject> =>
  error instanceof Refusal
    ? { code: error.code, details: error.message }
    : { code: grpc.status.INTERNAL, details: String(error) }

/** A status fault as gRPC answers it: the status mapped to its code, the message as the details. */
const GRPC_OF_HTTP: Readonly<Record<number, grpc.status>> = {
  429: grpc.status.RESOURCE_EXHAUSTED,
  500: grpc.status.INTERNAL,
  502: grpc.status.UNAVAILABLE,
  503: grpc.status.UNAVAILABLE,
  504: grpc.status.UNAVAILABLE
}

/**
 * The HTTP/2 session under a call, for a cut: grpc-js keeps the stream a few objects in (its
 * `ServerInterceptingCall`), found by shape rather than by its private names.
 */
const sessionOf = (call: object): { destroy: () => void } | undefined => {
  const seen = new Set<object>()
  const search = (value: unknown, depth: number): { destroy: () => void } | undefined => {
    if (typeof value !== "object" || value === null || seen.has(value) || depth > 4) return undefined
    seen.add(value)
    const session = (value as { session?: { destroy?: unknown } }).session
    if (typeof session?.destroy === "function" && "respond" in value) return session as { destroy: () => void }
    for (const key of Object.keys(value)) {
      const found = search((value as Record<string, unknown>)[key], depth + 1)
      if (found !== undefined) return found
    }
    return undefined
  }
  return search(call, 0)
}

/** A fault before the call is served: refused, or served later; a cut comes after (see `serve`). */
const servedAfter = async (fault: Fault | undefined) => {
  if (fault?.kind === "status") {
    throw new Refusal(GRPC_OF_HTTP[fault.status] ?? grpc.status.UNKNOWN, fault.message)
  }
  if (fault?.kind === "delay") await sleep(fault.millis)
  if (fault?.kind === "hold") await fault.until.then(() => undefined, () => undefined)
}

/**
 * Serve `service` (`package.Service` of the trimmed .proto file `proto`) on 127.0.0.1 without TLS,
 * `handlers` its methods (`streams` its server-streaming ones): each call recorded in `calls`,
 * `authorize`d (throwing a Refusal), met by its fault (none for the methods in `unfaulted`), served;
 * a cut destroys the HTTP/2 session after serving (the worse case: the work done, its answer lost),
 * a stream's once its first message was sent and a second is ready (the rest lost with the connection). The port, and how to stop.
 */
export const serve = async (input: {
  readonly proto: string
  readonly service: string
  readonly handlers: Readonly<Record<string, Handler>>
  readonly streams?: Readonly<Record<string, StreamHandler>>
  readonly calls: Array<RecordedCall>
  readonly authorize: (metadata: grpc.Metadata, request: Record<string, unknown>) => void
  readonly faults: Faults
  readonly unfaulted?: ReadonlyArray<string>
}): Promise<{ readonly port: number; readonly close: () => void }> => {
  const implementation: grpc.UntypedServiceImplementation = {}
  for (const [method, handle] of Object.entries(input.handlers)) {
    implementation[method] = (call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) => {
      const fault = input.unfaulted?.includes(method) === true ? undefined : input.faults.take("POST", method)
      Promise.resolve()
        .then(() => {
          input.calls.push({ method, request: call.request })
          input.authorize(call.metadata, call.request)
        })
        .then(() => servedAfter(fault))
        .then(() => handle(call.request, call.metadata.get("x-idempotency-key")[0]?.toString()))
        .then((response) => {
          const session = fault?.kind === "cut" ? sessionOf(call) : undefined
          if (session === undefined) callback(null, response)
          else session.destroy()
        }, (error) => callback(failure(error)))
    }
  }
  for (const [method, stream] of Object.entries(input.streams ?? {})) {
    implementation[method] = (call: grpc.ServerWritableStream<any, any>) => {
      const fault = input.faults.take("POST", method)
      const cancelled = new AbortController()
      call.on("cancelled", () => cancelled.abort())
      Promise.resolve()
        .then(() => {
          input.calls.push({ method, request: call.request })
          input.authorize(call.metadata, call.request)
        })
        .then(() => servedAfter(fault))
        .then(async () => {
          let sent = 0
          for await (const message of stream(call.request, cancelled.signal)) {
            const session = fault?.kind === "cut" && sent > 0 ? sessionOf(call) : undefined
            if (session !== undefined) return session.destroy()
            call.write(message)
            sent++
          }
          call.end()
        })
        .catch((error) => call.emit("error", failure(error)))
    }
  }
  const server = new grpc.Server()
  server.addService(loadService(input.proto, input.service), implementation)
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      "127.0.0.1:0",
      grpc.ServerCredentials.createInsecure(),
      (error, bound) => error === null ? resolve(bound) : reject(error)
    )
  )
  return { port, close: () => server.forceShutdown() }
}

const jwtPart = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url")

/** An unsigned JWT with `claims` and an hour's `exp`: the SDK only decodes one to know when to fetch another. */
export const unsignedJwt = (claims: object = {}) =>
  `${jwtPart({ alg: "none" })}.${jwtPart({ ...claims, exp: Math.floor(Date.now() / 1000) + 3600 })}.`

/** The claims of a JWT `unsignedJwt` made; undefined for anything else. */
export const jwtClaims = (jwt: string): Record<string, unknown> | undefined => {
  try {
    const claims: unknown = JSON.parse(Buffer.from(jwt.split(".")[1] ?? "", "base64url").toString("utf8"))
    return typeof claims === "object" && claims !== null ? claims as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}
