/**
 * Why a Modal sandbox ended, from its result as Modal keeps it (a `GenericResult`: status,
 * exception, exit code). The SDK's `wait()` and `poll()` fold that into a return code (124 for its
 * timeout, 137 for terminated, else the command's exit code), which reads an idle time-out as "its
 * server exited with code 0" and an out-of-memory eviction as "terminated"; the result itself says
 * which, so it is read through the client's own gRPC stub (the V2 call for the SDK's V2 sandboxes).
 */
import type { ModalClient } from "modal"

/** Modal's `GenericResult.GenericStatus` values. */
const STATUS = { success: 1, failure: 2, terminated: 3, timeout: 4, initFailure: 5, internal: 6, idle: 7 } as const

/** A sandbox's result, as Modal keeps it. */
export interface SandboxResult {
  readonly status: number
  readonly exception: string
  readonly exitcode: number
}

/**
 * The sandbox's result once it ended, waiting at most `timeoutSecs` for it (0: a poll); undefined
 * while it runs.
 */
export const sandboxResult = async (
  client: ModalClient,
  sandboxId: string,
  timeoutSecs: number
): Promise<SandboxResult | undefined> => {
  const request = { sandboxId, timeout: timeoutSecs }
  const answer = client.profile.sandboxV2
    ? await client.cpClient.sandboxWaitV2(request)
    : await client.cpClient.sandboxWait(request)
  const result = answer.result
  return result === undefined || result.status === 0 ? undefined : result
}

/** An eviction for memory, as Modal words its exception. */
const OUT_OF_MEMORY = /out of memory|\boom\b/i

/** Why it ended, for a message ("Modal sandbox <id> ended: <why>"); whether it ran out of memory. */
export const endedBecause = (result: SandboxResult): { readonly why: string; readonly outOfMemory: boolean } => {
  const said = result.exception.trim() === "" ? "" : `: ${result.exception.trim()}`
  if (OUT_OF_MEMORY.test(result.exception)) return { why: `it ran out of memory${said}`, outOfMemory: true }
  switch (result.status) {
    case STATUS.success:
    case STATUS.failure:
      return { why: `its server exited with code ${result.exitcode}`, outOfMemory: false }
    case STATUS.terminated:
      return { why: "it was terminated", outOfMemory: false }
    case STATUS.timeout:
      return { why: "its lifetime ran out", outOfMemory: false }
    case STATUS.idle:
      return { why: "its idle timeout ran out (nothing reached it through its tunnels)", outOfMemory: false }
    case STATUS.initFailure:
      return { why: `it failed to start${said}`, outOfMemory: false }
    default:
      return { why: `Modal failed it${said}`, outOfMemory: false }
  }
}

/** Whether the sandbox's command exited by itself (its exit code is the server's). */
export const exitedByItself = (result: SandboxResult): boolean =>
  result.status === STATUS.success || result.status === STATUS.failure

/** The return code the SDK would give (124 its lifetime, 137 terminated, else the command's). */
export const returnCode = (result: SandboxResult): number =>
  result.status === STATUS.timeout ? 124 : result.status === STATUS.terminated ? 137 : result.exitcode
