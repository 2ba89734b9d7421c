/**
 * A provider's SDK: an optional peer dependency, imported when a layer is built (never by importing
 * a runtime module), so only the provider's users install it; a missing one is a start error
 * saying what to install.
 */
import { Effect } from "effect"
import { RuntimeStartError } from "../schema/errors.ts"

export const optionalPeer = <M>(runtime: string, name: string, load: () => Promise<M>) =>
  Effect.tryPromise({
    try: load,
    catch: (cause) =>
      new RuntimeStartError({
        message: (cause as { code?: string }).code === "ERR_MODULE_NOT_FOUND"
          ? `${runtime} needs ${name}, an optional peer dependency: npm install ${name}`
          : `Cannot load ${name}: ${(cause as Error).message}`
      })
  })
