/**
 * Why a session's pod did not start, as data the caller can match on: an image the cluster cannot
 * pull and a pod no node takes are the provider's refusals (`image-missing`, `unschedulable`); a
 * container that exited is the server's (`server-exited`, with its exit code and last log lines).
 * The message stays the one `kubectl describe` readers know: the pod's reason, events and log.
 */
import type { PodNotStarted } from "../../engines/kubernetes/podWatch.ts"
import { ProviderError, RuntimeStartError } from "../../schema/errors.ts"
import type { DriverFailure } from "../../services/Driver.ts"

export const startFailure = (error: RuntimeStartError | PodNotStarted): DriverFailure => {
  if (error._tag === "RuntimeStartError") return error
  const { kind, exitCode } = error.trouble
  if (kind === "image-missing" || kind === "unschedulable") {
    return new ProviderError({
      provider: "Kubernetes",
      operation: `start pod ${error.pod}`,
      reason: kind,
      message: error.message
    })
  }
  return kind === "exited"
    ? new RuntimeStartError({
      message: error.message,
      reason: "server-exited",
      exitCode: exitCode ?? -1,
      output: error.output
    })
    : new RuntimeStartError({ message: error.message, reason: "other" })
}
