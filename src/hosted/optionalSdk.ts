/**
 * A provider's SDK, an optional peer dependency (DESIGN.md principle 11): imported when a layer is
 * built, never when its subpath is, so only its users install it. Missing, it is a start error
 * saying what to install; written once, so every runtime says it the same way.
 */
import { Effect } from "effect"
import { RuntimeStartError } from "../schema/errors.ts"

/** `load` (a dynamic `import` of `pkg`), or a start error: "<Runtime> needs <pkg> ...: npm install <install>". */
export const optionalSdk = <A>(runtime: string, pkg: string, load: () => Promise<A>, install: string = pkg) =>
  Effect.tryPromise({
    try: load,
    catch: (cause) =>
      new RuntimeStartError({
        message: (cause as { code?: string }).code === "ERR_MODULE_NOT_FOUND"
          ? `${runtime} needs ${pkg}, an optional peer dependency: npm install ${install}`
          : `Cannot load ${pkg}: ${(cause as Error).message}`
      })
  })
