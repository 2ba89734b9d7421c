/**
 * Owner processes for the ownership tests: a DockerRuntime in a process of its own
 * (fixtures/owner.ts) that a test SIGKILLs, so that no finalizer runs, and what
 * the tests look at afterwards (running state, host workspace, a reaper pass).
 */
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import { DockerEngine } from "../../src/engines/docker/engine.ts"
import { reapOrphans } from "../../src/providers/docker/reaper.ts"
import { dockerCli, inspect } from "./helpers.ts"

const NODE = join(import.meta.dirname, "..", "..", "node_modules", ".bin", "node")

/** What fixtures/owner.ts takes (lease terms in milliseconds). */
export interface OwnerOptions {
  readonly ownerLease?: { readonly renewEvery?: number; readonly staleAfter?: number; readonly reapEvery?: number }
  readonly keepRuntimeAlive?: boolean
  readonly workspace?: string
  /** Take a snapshot (labelled with the session) before READY. */
  readonly snapshot?: boolean
  /** The session of a second runtime the owner starts (a layer of its own) before its first. */
  readonly second?: string
}

const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null

/**
 * An owner process, by default in a PID namespace of its own, where it is pid 1:
 * `unshare --kill-child` takes it down when unshare is SIGKILLed. Resolves once the
 * owner's runtime answered; `kill` SIGKILLs it (no finalizer runs).
 */
export const owner = (image: string, session: string, options: OwnerOptions, ownPidNamespace = true) =>
  Effect.acquireRelease(
    Effect.callback<ChildProcess, Error>((resume) => {
      const command = [NODE, join(import.meta.dirname, "fixtures", "owner.ts"), image, session, JSON.stringify(options)]
      const unshare = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child=SIGKILL"]
      const [file, ...args] = ownPidNamespace ? [...unshare, ...command] : command
      const child = spawn(file!, args, { stdio: ["ignore", "pipe", "pipe"] })
      let output = ""
      const onData = (chunk: Buffer) => {
        output += chunk.toString()
        if (output.includes(`READY ${session}`)) resume(Effect.succeed(child))
      }
      child.stdout!.on("data", onData)
      child.stderr!.on("data", onData)
      child.on("exit", (code) => resume(Effect.fail(new Error(`owner exited (${code}) before READY:\n${output}`))))
    }).pipe(Effect.timeout("120 seconds")),
    (child) => Effect.sync(() => exited(child) || child.kill("SIGKILL"))
  )

export const kill = (child: ChildProcess) =>
  Effect.callback<void>((resume) => {
    if (exited(child)) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
    child.kill("SIGKILL")
  })

export const running = (id: string) => dockerCli("inspect", "-f", "{{.State.Running}}", id).stdout.trim() === "true"

/** The host directory a container has at /workspace. */
export const hostWorkspace = (id: string) =>
  inspect(id).pipe(Effect.map((info) => info!.Mounts.find((m) => m.Destination === "/workspace")!.Source))

/** One reaper pass, as any DockerRuntime runs it. */
export const reap = reapOrphans().pipe(Effect.provide(DockerEngine.layer))
