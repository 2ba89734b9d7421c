/**
 * `Sandbox`: the Promise API's handle to one runtime, for code that is not written in Effect (the
 * Vercel AI SDK, OpenAI's Agents SDK, LangChain). A thin layer: it builds a runtime's layer in a
 * scope of its own, runs the Effect API's calls as promises, and closes the scope on `close()` (or
 * at the end of an `await using` block). Everything a runtime does is the Effect API's; what the
 * facade adds is the program's view of commands and files (commands.ts, files.ts) and thrown errors
 * (errors.ts).
 */
import { Context, Effect, Exit, Layer, Scope } from "effect"
import {
  isRuntimeName,
  layerByName,
  RUNTIME_NAMES,
  type RuntimeLayer,
  type RuntimeName,
  type RuntimeOptionsByName
} from "../runtime/byName.ts"
import { InvalidOptionsError } from "../schema/errors.ts"
import { RuntimeSnapshotError, type Snapshot, type SnapshotOptions } from "../schema/snapshot.ts"
import { Runtime, type RuntimeInfo, type RuntimeShape } from "../services/Runtime.ts"
import { type CommandResult, runCommand, type RunOptions } from "./commands.ts"
import { SandboxError, settle } from "./errors.ts"
import { listFiles, readFile, writeFileIn } from "./files.ts"
import { closed, opened } from "./openSandboxes.ts"
import { atExit, snapshotModule } from "./runtimes.ts"

export class Sandbox implements AsyncDisposable {
  /**
   * Start a sandbox on the runtime called `runtime` (`"cli"`, `"local"`, `"docker"`, ...) with that
   * runtime's options. Rejects with a `SandboxError` (`RuntimeStartError`, `InvalidOptionsError`,
   * ...) when it cannot start; nothing is left behind then.
   */
  static async create<N extends RuntimeName>(runtime: N, options?: RuntimeOptionsByName[N]): Promise<Sandbox> {
    if (!isRuntimeName(runtime)) {
      const names = RUNTIME_NAMES.join(", ")
      throw new SandboxError(
        new InvalidOptionsError({ message: `Unknown runtime ${JSON.stringify(runtime)}: one of ${names}.` })
      )
    }
    const chosen = options ?? {}
    const sandbox = await Sandbox.build(await layerByName(runtime, chosen))
    opened(sandbox, atExit(runtime, chosen, sandbox.info))
    return sandbox
  }

  /** Start a sandbox from any runtime layer of the Effect API (`DockerRuntime.layer({...})`, `TestRuntime.layer()`, ...). */
  static async fromLayer(layer: RuntimeLayer): Promise<Sandbox> {
    const sandbox = await Sandbox.build(layer)
    opened(sandbox, () => undefined)
    return sandbox
  }

  /**
   * Our snapshots on the runtime called `runtime` (every owner's, kept ones too), as handles the
   * `fromSnapshot` option takes (docs/snapshots.md). Rejects with a `SandboxError`
   * (`RuntimeSnapshotError`) on a runtime that keeps none.
   */
  static async listSnapshots<N extends RuntimeName>(
    runtime: N,
    options?: RuntimeOptionsByName[N]
  ): Promise<ReadonlyArray<Snapshot>> {
    const module = await snapshotsOf(runtime, "list")
    return settle(await Effect.runPromiseExit(module.listSnapshots(options ?? {})))
  }

  /** Remove a snapshot (a kept one too: this is how one ends); one already gone is no failure. */
  static async removeSnapshot<N extends RuntimeName>(
    runtime: N,
    snapshot: Snapshot | string,
    options?: RuntimeOptionsByName[N]
  ): Promise<void> {
    const module = await snapshotsOf(runtime, "remove")
    return settle(await Effect.runPromiseExit(module.removeSnapshot(snapshot, options ?? {})))
  }

  /** The layer built in a scope of its own (closed at once, leaving nothing, if it fails). */
  private static async build(layer: RuntimeLayer): Promise<Sandbox> {
    const scope = Scope.makeUnsafe()
    const built = await Effect.runPromiseExit(Layer.buildWithScope(layer, scope))
    if (Exit.isFailure(built)) await Effect.runPromise(Scope.close(scope, built))
    return new Sandbox(Context.get(settle(built), Runtime), scope)
  }

  /** Where the sandbox lives: its id, kind, workspace and URLs (the Effect API's `RuntimeInfo`). */
  readonly info: RuntimeInfo

  readonly commands: {
    /**
     * Run `command` (`bash -c`) to its end as a process of its own, its output kept apart by stream.
     * A non-zero exit code is a result, not a rejection.
     */
    readonly run: (command: string, options?: RunOptions) => Promise<CommandResult>
  }

  readonly files: {
    /** The text of a UTF-8 file (relative paths are the workspace's); rejects with a `FileError`. */
    readonly read: (path: string) => Promise<string>
    /** Write the text exactly as given, creating parent directories and replacing a file. */
    readonly write: (path: string, content: string) => Promise<void>
    /** Names in a directory (default the workspace); directories end in `/` and come first. */
    readonly list: (path?: string) => Promise<ReadonlyArray<string>>
  }

  /** The Effect API's runtime, for what the facade does not cover (`runEffect` runs its calls). */
  readonly runtime: RuntimeShape
  readonly #scope: Scope.Closeable

  private constructor(runtime: RuntimeShape, scope: Scope.Closeable) {
    this.runtime = runtime
    this.#scope = scope
    this.info = runtime.info
    this.commands = {
      run: (command, options = {}) => this.runEffect(runCommand(runtime, command, options), options.signal)
    }
    this.files = {
      read: (path) => this.runEffect(readFile(runtime, path)),
      write: (path, content) => this.runEffect(writeFileIn(runtime, path, content)),
      list: (path) => this.runEffect(listFiles(runtime, path))
    }
  }

  /**
   * Run an effect of the Effect API (a call of `runtime`) as a promise: its typed failure is thrown
   * as a `SandboxError`; aborting `signal` interrupts it (what it started stops).
   */
  async runEffect<A, E>(effect: Effect.Effect<A, E>, signal?: AbortSignal): Promise<A> {
    return settle(await Effect.runPromiseExit(effect, signal === undefined ? undefined : { signal }), signal)
  }

  /**
   * A snapshot of the sandbox (its files; docs/snapshots.md says what each runtime keeps), from
   * which sandboxes start with the `fromSnapshot` option. Removed when this sandbox closes, unless
   * taken with `keep: true` (then `Sandbox.removeSnapshot` ends it). Rejects with a `SandboxError`:
   * `UnsupportedCapabilityError` where the runtime has no snapshots, `RuntimeSnapshotError` where
   * the provider refused.
   */
  snapshot(options: SnapshotOptions = {}): Promise<Snapshot> {
    return this.runEffect(this.runtime.snapshot(options))
  }

  /**
   * `count` new sandboxes started from one fresh snapshot of this one, each its own from then on.
   * As in the Effect API the copies share one lifetime: closing any of them closes them all (and
   * removes their snapshot), and closing this sandbox closes them first. Keep a copy worth keeping
   * by taking a snapshot of it with `keep: true` before closing.
   */
  async fork(count: number): Promise<ReadonlyArray<Sandbox>> {
    const scope = Scope.forkUnsafe(this.#scope)
    const forked = await Effect.runPromiseExit(Scope.provide(this.runtime.fork(count), scope))
    if (Exit.isFailure(forked)) await Effect.runPromise(Scope.close(scope, forked))
    return settle(forked).map((runtime) => {
      const copy = new Sandbox(runtime, scope)
      opened(copy, () => undefined)
      return copy
    })
  }

  /**
   * Stop the sandbox and remove what it made (its processes, container, temporary workspace).
   * Later calls reject with a `RuntimeDisconnectedError`; closing again does nothing.
   */
  async close(): Promise<void> {
    closed(this)
    await Effect.runPromise(Scope.close(this.#scope, Exit.void))
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }
}

/** The snapshot verbs of the runtime called `runtime`, or the `SandboxError` of one that keeps none. */
const snapshotsOf = async (runtime: RuntimeName, operation: "list" | "remove") => {
  const module = isRuntimeName(runtime) ? snapshotModule(runtime) : undefined
  if (module === undefined) {
    throw new SandboxError(
      new RuntimeSnapshotError({ operation, message: `${runtime} keeps no snapshots (docs/snapshots.md).` })
    )
  }
  return module
}
