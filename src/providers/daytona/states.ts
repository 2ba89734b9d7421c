/**
 * What a Daytona sandbox's `state` and `sandboxClass` mean to the hosted runtime. Daytona has some
 * twenty states, most of them a transition (`starting`, `pulling_snapshot`, `pausing`): one in
 * transition counts as where it goes, and a call Daytona refuses meanwhile (409 "Sandbox state
 * change in progress") is waited out by the hosted `ProviderCall` (classify.ts: `transition`).
 */
import type { SandboxState } from "../../services/Driver.ts"

/** Daytona's states as the hosted runtime knows them (a transition counts as where it goes). */
export const stateOf = (state = ""): SandboxState["_tag"] =>
  ["paused", "pausing"].includes(state)
    ? "paused"
    : ["stopped", "stopping", "archived", "archiving"].includes(state)
    ? "stopped"
    : ["destroyed", "destroying", "error", "build_failed"].includes(state)
    ? "gone"
    : "running"

/**
 * The sandbox classes Daytona pauses and resumes (its API refuses the others with 422 "Pausing is
 * not supported for this sandbox"). A sandbox has its snapshot's class, `container` unless the
 * snapshot was made with another (docs/runtimes/daytona.md, "Making the snapshot").
 */
export const PAUSING_CLASSES: ReadonlyArray<string> = ["linux-vm", "windows"]

/** Why Daytona will refuse to pause the sandbox, or undefined where it pauses it (its class is one of PAUSING_CLASSES). */
export const pauseRefusal = (sandbox: { readonly id: string; readonly sandboxClass?: string | undefined }) => {
  const sandboxClass = sandbox.sandboxClass ?? "container"
  return PAUSING_CLASSES.includes(sandboxClass) ? undefined : (
    `Daytona pauses only ${PAUSING_CLASSES.join(" and ")} sandboxes, and sandbox ${sandbox.id} is of class ` +
    `${sandboxClass} (its snapshot's): make the snapshot with --sandbox-class linux-vm ` +
    `(docs/runtimes/daytona.md, "Pause, resume, attach")`
  )
}
