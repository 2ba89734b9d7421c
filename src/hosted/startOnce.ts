/**
 * A server start that runs once however often its request is sent. The hosted runtime sends a
 * call again when its connection was cut, and a cut can come after the provider ran the command:
 * the first copy's server then holds the port, and a second one fails to listen (EADDRINUSE) and
 * is the command the driver follows, so the start failed or succeeded by which poll came first.
 * The providers' command APIs say nothing of what they do with a request sent twice, so the
 * command guards itself: the first copy takes the start's claim (`mkdir`, atomic), a copy after it
 * ends at once with `STOOD_DOWN` having run nothing, and the provisioner then waits for the first
 * copy's server on `/alive` (a `serverExit` of `STOOD_DOWN` is no exit: provisioner.ts). A first
 * copy that found no server in the image (`NO_IMAGE_SERVER`) gives the claim back, so a copy after
 * it looks again. In a `sh -c` of its own, so that its `exit` cannot end a persistent shell the
 * provider runs it in, and the command in a subshell, so that its own `exit` cannot skip the
 * claim's return. Used where a driver's retries send a cut start again: Runloop's, whose calls
 * take no answer as worth waiting out (as its SDK's own retries did). E2B's and Daytona's take it
 * as `unknown` and do not send the call again, so their starts fail on a cut instead.
 */
import { randomBytes } from "node:crypto"
import { shellQuote } from "../quoting/shellQuote.ts"
import { NO_IMAGE_SERVER } from "./serverFiles.ts"

/** How a copy of a start that found the start already claimed ends (EX_TEMPFAIL). */
export const STOOD_DOWN = 75

/** Where a start's claim is made in the sandbox. */
export const claimPath = (claim: string) => `/tmp/effect-sandbox-start-${claim}`

/**
 * `command` as a shell line that runs it only in the first copy to take its claim: one line for
 * every copy of one start (the claim, 64 random bits, is made here, once a start).
 */
export const startedOnce = (command: string, claim = randomBytes(8).toString("hex")): string => {
  const mark = claimPath(claim)
  return `sh -c ${
    shellQuote(
      `mkdir ${mark} 2>/dev/null || exit ${STOOD_DOWN}; (${command}); s=$?; ` +
        `[ "$s" != ${NO_IMAGE_SERVER} ] || rmdir ${mark}; exit "$s"`
    )
  }`
}
