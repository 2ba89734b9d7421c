/**
 * A provider's SDK, loaded when a layer is built: every provider's SDK is an optional peer
 * dependency (DESIGN.md principle 11), so its absence is a start error that says what to install,
 * worded once for every provider. The caller passes its own dynamic import, so the specifier stays
 * a literal bundlers and the package test can see.
 */
import { Effect } from "effect"
import { RuntimeStartError } from "../schema/errors.ts"

export const loadOptionalPeer = <A>(
  runtime: string,
  peer: string,
  install: string,
  load: () => Promise<A>
): Effect.Effect<A, RuntimeStartError> =>
  Effect.tryPromise({
    try: load,
    catch: (cause) =>
      new RuntimeStartError({
        message: (cause as { code?: string }).code === "ERR_MODULE_NOT_FOUND"
          ? `${runtime} needs ${peer}, an optional peer dependency: npm install ${install}`
          : `Cannot load ${peer}: ${(cause as Error).message}`
      })
  })
