/**
 * A condition of the stand-in's cluster that a test holds and then lets pass, as a live cluster's
 * pass by themselves: no node with room (until an autoscaler adds one), a PVC not yet bound (until
 * its provisioner makes the volume). Whatever waits on it wakes at once when it is released, so a
 * test waits for conditions, not durations.
 */
export class Gate {
  private released = new AbortController()
  private holds = 0

  /** Hold the condition until the returned function is called. */
  hold(): () => void {
    this.holds++
    if (this.holds === 1) this.released = new AbortController()
    let done = false
    return () => {
      if (done) return
      done = true
      if (--this.holds === 0) this.released.abort()
    }
  }

  get held(): boolean {
    return this.holds > 0
  }

  /** Aborted when the current hold ends (already aborted while nothing holds). */
  get signal(): AbortSignal {
    return this.holds > 0 ? this.released.signal : AbortSignal.abort()
  }
}
