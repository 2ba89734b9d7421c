/**
 * Builds the `Runtime` service from a transport ("backend"): the in-process
 * executor, the HTTP client, or a test script. Everything every runtime must do
 * the same way lives here once: the default timeout, spans and metrics, masking
 * of secrets, the status stream, typed shortcuts and capability checks.
 */
import { Effect, Queue, Redacted, Stream } from "effect"
import { invalidEnvNames } from "../../executor/env.ts"
import {
  type Action,
  BrowseInteractiveAction,
  BrowseURLAction,
  CmdRunAction,
  FileReadAction,
  FileWriteAction,
  IPythonRunCellAction,
  McpCallAction
} from "../../schema/Action.ts"
import { type ActionEvent, FinalObservation, OutputChunk } from "../../schema/ActionEvent.ts"
import { copyWith } from "../../schema/copy.ts"
import {
  invalidEnvMessage,
  InvalidEnvVarError,
  RuntimeDisconnectedError,
  type RuntimeError,
  type TransferError,
  UnsupportedCapabilityError
} from "../../schema/errors.ts"
import type { McpTool } from "../../schema/McpTool.ts"
import type { Observation } from "../../schema/Observation.ts"
import { SecretMask, shortSecretsError } from "../../schema/secrets.ts"
import type { EnvValue, RuntimeInfo, RuntimeShape } from "../../services/Runtime.ts"
import type { StatusCell } from "./statusCell.ts"
import { instrumentAction } from "./telemetry.ts"

/** What a transport must provide; `makeRuntime` adds the rest. */
export interface RuntimeBackend {
  readonly info: RuntimeInfo
  /** `SandboxConfig.timeout`: the hard timeout of actions that set none. */
  readonly defaultTimeoutSeconds: number
  /**
   * `onOutput` (from `runStream`) sees a command's output as it is printed, before the observation;
   * a backend that cannot stream ignores it and the observation alone ends the stream.
   */
  readonly execute: (action: Action, onOutput?: (text: string) => void) => Effect.Effect<Observation, RuntimeError>
  /** Sees each action exactly as the caller sent it, before the defaults (TestRuntime records it). */
  readonly received?: (action: Action) => Effect.Effect<void>
  readonly copyTo: (
    hostSource: string,
    sandboxDest: string,
    recursive: boolean
  ) => Effect.Effect<void, TransferError | RuntimeError>
  readonly copyFrom: (sandboxPath: string, hostZipPath: string) => Effect.Effect<void, TransferError | RuntimeError>
  readonly listFiles: (path?: string) => Effect.Effect<ReadonlyArray<string>, RuntimeError>
  readonly listTools: Effect.Effect<ReadonlyArray<McpTool>, RuntimeError>
  /** `secrets`: the names in `vars` given as `Redacted`, whose values the backend masks before truncating output. */
  readonly setEnv: (
    vars: Readonly<Record<string, string>>,
    secrets: ReadonlyArray<string>
  ) => Effect.Effect<void, InvalidEnvVarError | RuntimeError>
  readonly pause?: Effect.Effect<void, RuntimeError>
  readonly resume?: Effect.Effect<void, RuntimeError>
}

export const makeRuntime = (
  backend: RuntimeBackend,
  status: StatusCell
): RuntimeShape => {
  const mask = new SecretMask()
  const kind = backend.info.kind

  /**
   * Secrets masked in what reaches the caller, results and typed errors (whose texts may echo
   * output), as defence in depth: the executor already masked before truncating, a server that
   * does not (OpenHands') did not. Every backend call goes through here, so it is also `live`.
   */
  const masked = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E | RuntimeDisconnectedError> =>
    live(effect).pipe(Effect.map((a) => mask.deep(a)), Effect.mapError((e) => mask.deep(e)))

  /**
   * A runtime whose layer was released (status STOPPED) refuses every call the same way on every
   * runtime; without this CliRuntime died with `ENOENT .../command.sh` from its removed state dir.
   */
  const live = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E | RuntimeDisconnectedError> =>
    Effect.flatMap(status.get, (current): Effect.Effect<A, E | RuntimeDisconnectedError> =>
      current === "STOPPED"
        ? Effect.fail(
          new RuntimeDisconnectedError({
            message: `The ${kind} runtime was released (its layer's scope closed): build a new runtime to run actions.`
          })
        )
        : effect)

  const execute = (action: Action, onOutput?: (text: string) => void): Effect.Effect<Observation, RuntimeError> => {
    const timed = action.timeout === undefined
      ? copyWith(action, { timeout: backend.defaultTimeoutSeconds } as Partial<Action>)
      : action
    const executed = backend.received === undefined
      ? backend.execute(timed, onOutput)
      : Effect.andThen(backend.received(action), backend.execute(timed, onOutput))
    return instrumentAction(kind, action, masked(executed))
  }
  const run = (action: Action) => execute(action)

  /**
   * `run` with the output as it comes. The chunks are masked across their boundaries (a secret
   * split between two chunks is held back until it is whole); the stream's fiber is the action's,
   * so interrupting the consumer interrupts the action as interrupting `run` does.
   */
  const runStream = (action: Action): Stream.Stream<ActionEvent, RuntimeError> =>
    Stream.callback<ActionEvent, RuntimeError>((queue) => {
      const output = mask.stream((text) => void Queue.offerUnsafe(queue, new OutputChunk({ text })))
      return execute(action, output).pipe(
        Effect.tap(() => Effect.sync(output.flush)),
        Effect.flatMap((observation) => Queue.offer(queue, new FinalObservation({ observation }))),
        Effect.andThen(Queue.end(queue))
      )
    })
  // The executor answers each action type with its own observation types (or an ErrorObservation).
  const runAs = <O extends Observation>(action: Action) => run(action) as Effect.Effect<O, RuntimeError>

  const unsupported = (capability: string) =>
    Effect.fail(
      new UnsupportedCapabilityError({
        capability,
        runtime: kind,
        message: `The ${kind} runtime cannot ${capability}: it has nothing to freeze. Use a Docker or remote runtime.`
      })
    )

  return {
    info: backend.info,
    status: status.changes,
    currentStatus: status.get,
    run,
    runStream,
    runCommand: (command) => runAs(typeof command === "string" ? new CmdRunAction({ command }) : command),
    runIPython: (code) => runAs(typeof code === "string" ? new IPythonRunCellAction({ code }) : code),
    read: (path) => runAs(typeof path === "string" ? new FileReadAction({ path }) : path),
    write: (file) => runAs(file instanceof FileWriteAction ? file : new FileWriteAction(file)),
    edit: (action) => runAs(action),
    browse: (url) => runAs(typeof url === "string" ? new BrowseURLAction({ url }) : url),
    browseInteractive: (actions) =>
      runAs(typeof actions === "string" ? new BrowseInteractiveAction({ browserActions: actions }) : actions),
    callTool: (call) =>
      runAs(
        call instanceof McpCallAction ? call : new McpCallAction({ name: call.name, arguments: call.arguments ?? {} })
      ),
    listTools: masked(backend.listTools).pipe(
      Effect.withSpan("Runtime.listTools", { attributes: { "runtime.kind": kind } })
    ),
    copyTo: (hostSource, sandboxDest, options) =>
      masked(backend.copyTo(hostSource, sandboxDest, options?.recursive ?? false)).pipe(
        Effect.withSpan("Runtime.copyTo", { attributes: { "runtime.kind": kind } })
      ),
    copyFrom: (sandboxPath, hostZipPath) =>
      masked(backend.copyFrom(sandboxPath, hostZipPath)).pipe(
        Effect.withSpan("Runtime.copyFrom", { attributes: { "runtime.kind": kind } })
      ),
    listFiles: (path) => masked(backend.listFiles(path)),
    addEnvVars: (vars: Readonly<Record<string, EnvValue>>) =>
      Effect.suspend(() => {
        const invalid = invalidEnvNames(vars)
        if (invalid.length > 0) {
          return Effect.fail(new InvalidEnvVarError({ names: invalid, message: invalidEnvMessage(invalid) }))
        }
        const plain: Record<string, string> = {}
        const secrets: Array<string> = []
        for (const [name, value] of Object.entries(vars)) {
          plain[name] = Redacted.isRedacted(value) ? Redacted.value(value) : value
          if (Redacted.isRedacted(value)) secrets.push(name)
        }
        const short = shortSecretsError(plain, secrets)
        if (short !== undefined) return Effect.fail(short)
        for (const name of secrets) mask.add(plain[name]!)
        // Span attributes carry names only, never values.
        return masked(backend.setEnv(plain, secrets)).pipe(
          Effect.withSpan("Runtime.addEnvVars", { attributes: { "runtime.kind": kind, names: Object.keys(vars) } })
        )
      }),
    pause: backend.pause === undefined ? unsupported("pause") : live(backend.pause),
    resume: backend.resume === undefined ? unsupported("resume") : live(backend.resume)
  }
}
