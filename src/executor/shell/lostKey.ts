/**
 * A C-c that bash loses between two commands of a line. The terminal signals its foreground
 * process group when the key is read, a moment after it is written. If the job it meant had just
 * ended on its own, or bash had the terminal back between two jobs, nobody acts on it: bash goes
 * on with the line, and its next job runs as if no key had been pressed. Measured with bash 5.2
 * on a line of 25 `sleep 0.01` then `sleep 30`, a key at a random moment: 5 of 100 lost on an idle
 * machine, 9–12 of 100 with the cores busy. An agent would see its C-c ignored and the command
 * run on for its whole length.
 *
 * So the key is pressed again for each job that takes the terminal after it, for a second,
 * until the command has ended. What this changes from a terminal: a job that handles C-c and
 * exits 0 within that second lets bash go on, and the next job is sent the key too, as if the
 * user had pressed it again because the line was still running.
 *
 * A key is also lost when it reaches a job before its exec: the job is still bash's copy of itself
 * with bash's handler, which takes the signal, and the exec forgets it (processTree.ts `jobState`).
 * So a job is sent the key only once it is past that, and a key that went to a job still in it is
 * sent again when the job is past it and still has the terminal.
 */
import { Duration, Effect } from "effect"
import { INTERRUPT_KEY } from "./keys.ts"
import { foregroundProcessGroup, jobState } from "./processTree.ts"
import type { RunningCommand } from "./runningCommand.ts"
import type { SessionState } from "./sessionState.ts"
import type { ShellProcess } from "./ShellProcess.ts"

/** How often the terminal's foreground is looked at, and for how long after the key. */
const LOOK_EVERY = Duration.millis(25)
const LOOKS = 40

/**
 * Looks after which a job that has the terminal and still shows as bash's copy with bash's handler
 * is sent the key all the same: it is most likely a subshell running shell code (which the key
 * does reach), a fork to exec taking well under a millisecond on an idle machine. Should it be a
 * slow fork after all, it is sent the key again once it is past that.
 */
const SUBSHELL_LOOKS = 4

/**
 * Press C-c again whenever a job other than the one last keyed (first `meant`) has the terminal
 * while `r` still runs, for a second; and press it again for the keyed job if that key went while
 * the job was `forking` (`doubtful`) and the job, past that, still has the terminal (a job that
 * stays `forking` is a subshell, whose handler took the key).
 */
const pressAgainIfLost = Effect.fn("BashSession.pressAgainIfLost")(
  function*(state: SessionState, r: RunningCommand, shell: ShellProcess, meant: number, doubtful: boolean) {
    let keyed = meant
    let uncertain = doubtful
    let forking = { group: 0, looks: 0 }
    for (let look = 0; look < LOOKS; look++) {
      yield* Effect.sleep(LOOK_EVERY)
      if (r.ended || state.running !== r || state.shell !== shell) return
      const now = foregroundProcessGroup(shell.pid)
      if (now === null || now === shell.pid || (now === keyed && !uncertain)) continue
      const job = jobState(now, shell.pid)
      if (job === "gone") continue
      if (job === "forking") {
        if (now === keyed) continue
        forking = { group: now, looks: forking.group === now ? forking.looks + 1 : 1 }
        if (forking.looks < SUBSHELL_LOOKS) continue
      }
      keyed = now
      uncertain = job === "forking"
      shell.write(INTERRUPT_KEY)
    }
  }
)

/**
 * Press C-c for `r` now. What comes back watches for the key being lost, from the foreground group
 * it was meant for, read as it is written (by the time a fiber runs, the next job may hold the
 * terminal); it outlives the action's own wait, so it is forked into the session's scope.
 */
export const pressInterrupt = (state: SessionState, r: RunningCommand): Effect.Effect<void> => {
  const shell = state.shell
  if (shell === null) return Effect.void
  const meant = foregroundProcessGroup(shell.pid)
  const doubtful = meant !== null && meant !== shell.pid && jobState(meant, shell.pid) === "forking"
  shell.write(INTERRUPT_KEY)
  return meant === null ? Effect.void : pressAgainIfLost(state, r, shell, meant, doubtful)
}
