/**
 * Where a browser reaches VS Code in a Daytona sandbox. The sandbox is private: its preview links
 * answer only requests carrying the `X-Daytona-Preview-Token` header, which the runtime's client
 * sends to the server but a browser opening a URL cannot. Daytona's signed preview URL carries a
 * token of its own in the host name instead (`{port}-{token}.{proxy domain}`), for one port and a
 * limited time: that is VS Code's base URL. The IDE stays behind its connection token as well
 * (the `tkn` of `info.urls.vscode`), as on every runtime.
 *
 * Expiry: `info.urls.vscode` is made once, when the sandbox is handed to its runtime, and lives as
 * long as the runtime; so by default the link lives as long as Daytona allows (24 hours). Daytona's
 * proxy, once it let a browser in with the link, keeps it in through a cookie for an hour more.
 */
import type { Sandbox } from "@daytonaio/sdk"
import { Duration, Effect, Option } from "effect"
import { InvalidOptionsError } from "../../schema/errors.ts"
import { VSCODE_PORT } from "../internal/serverTools.ts"
import { daytonaCall } from "./errors.ts"

/** Daytona's bounds for a signed preview URL's `expiresInSeconds`. */
const LONGEST_SECONDS = 24 * 60 * 60

/** The link's life unless `vscodeLinkExpiry` says otherwise: Daytona's longest. */
export const DEFAULT_VSCODE_LINK_EXPIRY: Duration.Input = "24 hours"

/**
 * `vscodeLinkExpiry` in whole seconds, or an InvalidOptionsError when Daytona would refuse it
 * (checked before anything is created).
 */
export const vscodeLinkSeconds = (expiry: Duration.Input | undefined) =>
  Effect.gen(function*() {
    const duration = Duration.fromInput(expiry ?? DEFAULT_VSCODE_LINK_EXPIRY)
    const seconds = Option.isSome(duration) ? Math.floor(Duration.toSeconds(duration.value)) : Number.NaN
    if (!(seconds >= 1 && seconds <= LONGEST_SECONDS)) {
      return yield* new InvalidOptionsError({
        message: "DaytonaRuntime options: vscodeLinkExpiry must be between 1 second and 24 hours " +
          "(what Daytona allows for a signed preview URL)."
      })
    }
    return seconds
  })

/**
 * The signed preview URL of VS Code's port, valid `seconds` (without a trailing slash); undefined,
 * with a warning, when Daytona refuses it: the runtime works on without its IDE.
 */
export const vscodeLink = (sandbox: Sandbox, seconds: number) =>
  daytonaCall(
    `get a signed preview link of port ${VSCODE_PORT}`,
    () => sandbox.getSignedPreviewUrl(VSCODE_PORT, seconds)
  ).pipe(
    Effect.map((link): string | undefined => link.url.replace(/\/+$/, "")),
    Effect.catch((error) => Effect.as(Effect.logWarning(`No VS Code link: ${error.message}`), undefined))
  )
