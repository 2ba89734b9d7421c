/**
 * What Modal's refusals mean, for the ones the stand-in does not provoke (start.test.ts covers
 * UNAUTHENTICATED, RESOURCE_EXHAUSTED, a missing image and a failed image build end to end): a gRPC
 * status (nice-grpc's ClientError, its `details` Modal's text) gives the reason and gRPC's HTTP
 * status; an SDK class gives the reason by name; anything else is `unknown` with its message.
 */
import { assert, describe, it } from "@effect/vitest"
import { classifyModal } from "../../../src/providers/modal/classify.ts"

/** An error as nice-grpc's ClientError carries it: the message repeats the method and status name. */
const grpcError = (code: number, details: string) =>
  Object.assign(new Error(`/modal.client.ModalClient/SandboxCreateV2 ${code}: ${details}`), {
    name: "ClientError",
    code,
    details
  })

/** An error of one of the SDK's classes (they carry no status). */
const sdkError = (name: string, message: string) => Object.assign(new Error(message), { name })

describe("classifyModal", () => {
  it("maps gRPC statuses to reasons and gRPC's HTTP statuses, with Modal's details as the text", () => {
    assert.deepStrictEqual(
      [
        classifyModal(grpcError(7, "Workspace is not allowed to create sandboxes")),
        classifyModal(grpcError(14, "Service temporarily unavailable")),
        classifyModal(grpcError(6, "Sandbox name already in use")),
        classifyModal(grpcError(3, "cpu must be positive")),
        classifyModal(grpcError(4, "Deadline exceeded"))
      ],
      [
        { reason: "forbidden", status: 403, text: "Workspace is not allowed to create sandboxes" },
        { reason: "unavailable", status: 503, text: "Service temporarily unavailable" },
        { reason: "conflict", status: 409, text: "Sandbox name already in use" },
        { reason: "invalid", status: 400, text: "cpu must be positive" },
        { reason: "timeout", status: 504, text: "Deadline exceeded" }
      ]
    )
  })

  it("reads the SDK's own classes by name, a failed image build by its text, and the rest as unknown", () => {
    assert.deepStrictEqual(
      [
        classifyModal(sdkError("NotFoundError", "Sandbox with id: 'sb-1' not found")),
        classifyModal(sdkError("SandboxTimeoutError", "Sandbox operation timed out")),
        classifyModal(new Error("Image build for im-1 failed with the exception:\nno such file")),
        classifyModal(new Error("socket hang up")),
        classifyModal("a string")
      ],
      [
        { reason: "not-found", status: undefined, text: "Sandbox with id: 'sb-1' not found" },
        { reason: "timeout", status: undefined, text: "Sandbox operation timed out" },
        {
          reason: "image-missing",
          status: undefined,
          text: "Image build for im-1 failed with the exception:\nno such file"
        },
        { reason: "unknown", status: undefined, text: "socket hang up" },
        { reason: "unknown", status: undefined, text: "a string" }
      ]
    )
  })
})
