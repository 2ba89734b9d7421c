/** A capability a runtime does not have, refused the same way on every runtime. */
import { Effect } from "effect"
import { UnsupportedCapabilityError } from "../schema/errors.ts"

/** `why` defaults to pause/resume's reason, the capability most runtimes lack. */
export const unsupported = (
  kind: string,
  capability: string,
  why = "it has nothing to freeze. Use a Docker or remote runtime"
): Effect.Effect<never, UnsupportedCapabilityError> =>
  Effect.fail(
    new UnsupportedCapabilityError({
      capability,
      runtime: kind,
      message: `The ${kind} runtime cannot ${capability}: ${why}.`
    })
  )
