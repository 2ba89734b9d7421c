/**
 * A server start that runs once however often its request is sent. The hosted runtime sends a
 * call again when its connection was cut, and a cut can come after Runloop ran the command: the
 * first copy's server then holds the port, and a second one fails to listen (EADDRINUSE) and is
 * the execution the driver follows, so the start failed or succeeded by which poll came first.
 * Runloop's command API says nothing of what it does with a request sent twice, so the command
 * guards itself: the first copy takes the launch's claim (`mkdir`, atomic), a copy after it ends
 * at once with `STOOD_DOWN` having run nothing, and the driver then waits for the first copy's
 * server on `/alive`. A first copy that found no server in the image (`NO_IMAGE_SERVER`) gives
 * the claim back, so a copy after it looks again. In a `sh -c` of its own, so that its `exit`
 * cannot end the named shell Runloop runs it in, and the command in a subshell, so that its own
 * `exit` cannot skip the claim's return.
 */
import { NO_IMAGE_SERVER } from "../../hosted/serverFiles.ts"
import { shellQuote } from "../../quoting/shellQuote.ts"

/** How a copy of a start that found the launch already claimed ends (EX_TEMPFAIL). */
export const STOOD_DOWN = 75

/** `command` as a shell line that runs it only in the first copy to claim `claim` (a fresh token a launch). */
export const startedOnce = (command: string, claim: string): string => {
  const mark = `/tmp/effect-sandbox-start-${claim}`
  return `sh -c ${
    shellQuote(
      `mkdir ${mark} 2>/dev/null || exit ${STOOD_DOWN}; (${command}); s=$?; ` +
        `[ "$s" != ${NO_IMAGE_SERVER} ] || rmdir ${mark}; exit "$s"`
    )
  }`
}
