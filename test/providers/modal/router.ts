/**
 * A sandbox's task command router, as Modal serves it beside the control plane: its own gRPC service
 * (`modal.task_command_router.TaskCommandRouter`, task_command_router.proto) at the URL the control
 * plane's `SandboxGetCommandRouterAccess` gives with a JWT for the sandbox's task. The SDK takes the
 * URL only as `https://`, yet dials it without TLS when its profile's server is on localhost (as the
 * stand-in's is): so one plaintext server on 127.0.0.1 serves every sandbox, and each call must carry
 * `authorization: Bearer <a JWT of that task, not expired>` (else UNAUTHENTICATED, on which the SDK
 * asks for another). Served: `TaskSnapshotFilesystem`, with Modal's rules (a running sandbox's
 * main container only, `ttl_seconds` positive or -1), and `SandboxStdioReadV2`, the sandbox command's
 * output as it is printed (stdio.ts), also once the sandbox ended (its output whole, then the end).
 */
import * as grpc from "@grpc/grpc-js"
import type { Faults } from "../faults.ts"
import { jwtClaims, type RecordedCall, Refusal, serve, unsignedJwt } from "./calls.ts"
import type { Images } from "./images.ts"
import type { StandinSandbox } from "./sandboxes.ts"

/** The bearer must be a JWT the stand-in gave for the request's task, not expired. */
const authorize = (metadata: grpc.Metadata, request: Record<string, unknown>) => {
  const bearer = /^Bearer (.+)$/.exec(String(metadata.get("authorization")[0] ?? ""))?.[1]
  const claims = bearer === undefined ? undefined : jwtClaims(bearer)
  if (
    claims === undefined || claims["task_id"] !== request["taskId"] ||
    typeof claims["exp"] !== "number" || claims["exp"] * 1000 <= Date.now()
  ) {
    throw new Refusal(grpc.status.UNAUTHENTICATED, "Invalid or expired task command router token")
  }
}

/** SandboxStdioFileDescriptor (task_command_router.proto). */
const STDIO: Readonly<Record<number, "stdout" | "stderr">> = { 0: "stdout", 1: "stderr" }

export interface Router {
  /** What `SandboxGetCommandRouterAccess` answers for a sandbox: the router's URL and a JWT of its task. */
  readonly access: (sandbox: StandinSandbox) => { readonly url: string; readonly jwt: string }
  readonly close: () => void
}

export const startRouter = async (input: {
  /** The sandbox running `taskId`, if any. */
  readonly sandboxOfTask: (taskId: string) => StandinSandbox | undefined
  readonly images: Images
  readonly calls: Array<RecordedCall>
  readonly faults: Faults
}): Promise<Router> => {
  const handlers = {
    TaskSnapshotFilesystem: async (request: {
      readonly taskId: string
      readonly snapshotId: string
      readonly ttlSeconds?: number | null
      readonly containerId: string
    }) => {
      const sandbox = input.sandboxOfTask(request.taskId)
      if (sandbox === undefined) throw new Refusal(grpc.status.NOT_FOUND, `Task ${request.taskId} not found`)
      if (sandbox.result !== undefined) {
        throw new Refusal(grpc.status.FAILED_PRECONDITION, `Task ${request.taskId} is not running`)
      }
      if (request.containerId !== "") {
        throw new Refusal(grpc.status.NOT_FOUND, `Container ${request.containerId} not found`)
      }
      const ttl = request.ttlSeconds ?? 0
      if (!(ttl > 0 || ttl === -1)) {
        throw new Refusal(grpc.status.INVALID_ARGUMENT, "ttl_seconds must be positive, or -1 for no expiry")
      }
      return { imageId: await input.images.snapshot(sandbox.container, request.snapshotId, ttl) }
    }
  }
  const streams = {
    SandboxStdioReadV2: (
      request: { readonly taskId: string; readonly offset: number; readonly fileDescriptor: number },
      signal: AbortSignal
    ) => {
      const sandbox = input.sandboxOfTask(request.taskId)
      if (sandbox === undefined) throw new Refusal(grpc.status.NOT_FOUND, `Task ${request.taskId} not found`)
      const output = STDIO[request.fileDescriptor]
      if (output === undefined) {
        throw new Refusal(grpc.status.INVALID_ARGUMENT, `Invalid file descriptor ${request.fileDescriptor}`)
      }
      return sandbox.stdio[output].from(request.offset, signal)
    }
  }
  const served = await serve({
    proto: "task_command_router.proto",
    service: "modal.task_command_router.TaskCommandRouter",
    handlers,
    streams,
    calls: input.calls,
    authorize,
    faults: input.faults
  })
  return {
    access: (sandbox) => ({ url: `https://127.0.0.1:${served.port}`, jwt: unsignedJwt({ task_id: sandbox.taskId }) }),
    close: served.close
  }
}
