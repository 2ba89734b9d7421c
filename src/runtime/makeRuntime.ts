/**
 * Builds the `Runtime` service from a transport ("backend"): the in-process
 * executor, the HTTP client, or a test script. Everything every runtime must do
 * the same way lives here once: the default timeout, spans and metrics, masking
 * of secrets, the status stream, typed shortcuts and capability checks.
 */
import { Effect, Option, Queue, Redacted, type SchemaIssue, Stream } from "effect"
import { isDraftEdit } from "../editor/draftEditor.ts"
import { invalidEnvNames } from "../executor/env.ts"
import {
  type Action,
  BrowseInteractiveAction,
  BrowseURLAction,
  CmdRunAction,
  FileEditAction,
  FileReadAction,
  FileWriteAction,
  IPythonRunCellAction,
  McpCallAction
} from "../schema/Action.ts"
import { type ActionEvent, FinalObservation, OutputChunk } from "../schema/ActionEvent.ts"
import { ANSWERS, answers } from "../schema/answers.ts"
import { copyWith } from "../schema/copy.ts"
import {
  invalidEnvMessage,
  InvalidEnvVarError,
  type InvalidOptionsError,
  RuntimeDisconnectedError,
  type RuntimeError,
  RuntimePausedError,
  RuntimeStartError,
  UnsupportedCapabilityError
} from "../schema/errors.ts"
import { invalidOptions } from "../schema/issues.ts"
import { ErrorObservation, type Observation } from "../schema/Observation.ts"
import { SecretMask, shortSecretsError } from "../schema/secrets.ts"
import type { EnvValue } from "../services/EnvValue.ts"
import type { ProcessHandle, SpawnOptions } from "../services/Processes.ts"
import type { RuntimeShape } from "../services/Runtime.ts"
import type { RuntimeBackend } from "../services/RuntimeBackend.ts"
import type { StatusCell } from "./statusCell.ts"
import { instrumentAction } from "./telemetry.ts"

/** An action class, as the shortcuts that take its fields as a plain object use it. */
interface ActionClass<A extends Action> {
  new(...args: never): A
  readonly identifier: string
  readonly makeEffect: (input: never) => Effect.Effect<A, SchemaIssue.Issue>
}

/** The action itself, or built from a plain object: a bad field is a typed error, not a thrown exception. */
const actionOf = <A extends Action>(value: unknown, Class: ActionClass<A>): Effect.Effect<A, InvalidOptionsError> =>
  value instanceof Class
    ? Effect.succeed(value)
    : Effect.mapError(Class.makeEffect(value as never), (issue) => invalidOptions(Class.identifier, issue))

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
  const masked = <A, E>(
    effect: Effect.Effect<A, E>
  ): Effect.Effect<A, E | RuntimeDisconnectedError | RuntimePausedError> =>
    unpaused(effect).pipe(Effect.map((a) => mask.deep(a)), Effect.mapError((e) => mask.deep(e)))

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

  /** A call made while PAUSED fails at once, or waits for the resume (`whilePaused`). */
  const unpaused = <A, E>(
    effect: Effect.Effect<A, E>
  ): Effect.Effect<A, E | RuntimeDisconnectedError | RuntimePausedError> =>
    Effect.flatMap(status.get, (current): Effect.Effect<A, E | RuntimeDisconnectedError | RuntimePausedError> => {
      if (current !== "PAUSED") return live(effect)
      if (backend.whilePaused === "wait") return Effect.andThen(status.awaitNot("PAUSED"), live(effect))
      return Effect.fail(
        new RuntimePausedError({
          message: `The ${kind} runtime is paused: call resume first, or build its layer with whilePaused: "wait" ` +
            "to have calls wait for the resume."
        })
      )
    })

  /** PAUSED from before the sandbox is frozen (no call starts meanwhile); the old status back if it fails. */
  const pause = (freeze: Effect.Effect<void, RuntimeError>) =>
    Effect.flatMap(status.get, (before) =>
      status.set("PAUSED").pipe(
        Effect.andThen(freeze),
        Effect.tapError(() => status.update((s) => s === "PAUSED" ? before : s))
      ))

  /**
   * Why IPython cannot run (its kernel did not start): a cell fails with it on every runtime, as
   * CliRuntime's executor does, instead of a server's 500 read as a lost server.
   */
  const noKernel = backend.info.capabilities.unavailable?.ipython

  const execute = (action: Action, onOutput?: (text: string) => void): Effect.Effect<Observation, RuntimeError> => {
    const draft = backend.draftEditor ?? Option.none()
    if (isDraftEdit(action) && Option.isSome(draft)) {
      return instrumentAction(kind, action, masked(draft.value.edit(action, run)))
    }
    const timed = action.timeout === undefined
      ? copyWith(action, { timeout: backend.defaultTimeoutSeconds } as Partial<Action>)
      : action
    const sent = noKernel !== undefined && action._tag === "IPythonRunCellAction"
      ? Effect.fail(new RuntimeStartError({ message: noKernel }))
      : backend.execute(timed, onOutput)
    const executed = backend.received === undefined ? sent : Effect.andThen(backend.received(action), sent)
    return instrumentAction(kind, action, masked(executed))
  }
  const run = (action: Action): Effect.Effect<Observation, RuntimeError> => execute(action)

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
  /**
   * Run, keeping the shortcut's type true: an observation that cannot answer the action (a
   * server answering out of turn, a mis-scripted TestRuntime step) becomes an ErrorObservation
   * saying so. `O` is the shortcut's declared answer.
   */
  const runAs = <O extends Observation>(action: Action): Effect.Effect<O | ErrorObservation, RuntimeError> =>
    Effect.map(run(action), (observation) =>
      answers(action, observation)
        ? observation as O | ErrorObservation
        : new ErrorObservation({
          content: `The ${kind} runtime answered a ${action._tag} with a ${observation._tag}, not a ${
            ANSWERS[action._tag].join(" or ")
          }.`
        }))

  /**
   * Variables checked (names a shell can export, secrets long enough to mask) and split into
   * plain values and the names of the secrets, whose values are masked from now on.
   */
  const unredacted = (vars: Readonly<Record<string, EnvValue>>) =>
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
      return Effect.succeed({ plain, secrets })
    })

  /** A background process's handle over the backend's control; its scope's end removes (kills) it. */
  const spawn = Effect.fn("Runtime.spawn")(function*(command: string, options: SpawnOptions = {}) {
    const { processes } = backend
    if (processes === undefined) return yield* unsupported("spawn background processes", "it has no process manager")
    const { plain, secrets } = yield* unredacted(options.env ?? {})
    const started = yield* Effect.acquireRelease(
      masked(processes.start({
        command,
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
        ...(options.env === undefined ? {} : { env: plain, secrets })
      })),
      ({ id }) => Effect.ignore(processes.remove(id))
    )
    const { id } = started
    const handle: ProcessHandle<RuntimeError> = {
      id,
      pid: started.pid,
      // Defence in depth, as for observations: the executor masked before cutting into chunks.
      output: Stream.unwrap(masked(processes.output(id))).pipe(Stream.map((chunk) => mask.deep(chunk))),
      write: (text) => masked(processes.write(id, text)),
      closeStdin: masked(processes.closeStdin(id)),
      signal: (name) => masked(processes.signal(id, name)),
      wait: masked(processes.wait(id))
    }
    if (options.stdin !== undefined) {
      // The process was just started in this scope: it cannot be unknown yet.
      yield* Effect.andThen(handle.write(options.stdin), handle.closeStdin).pipe(
        Effect.catchTag("ProcessNotFoundError", Effect.die)
      )
    }
    return handle
  }, Effect.annotateSpans({ "runtime.kind": kind }))

  const unsupported = (capability: string, why = "it has nothing to freeze. Use a Docker or remote runtime") =>
    Effect.fail(
      new UnsupportedCapabilityError({
        capability,
        runtime: kind,
        message: `The ${kind} runtime cannot ${capability}: ${why}.`
      })
    )

  return {
    info: backend.info,
    status: status.changes,
    currentStatus: status.get,
    // A released runtime stays STOPPED: a late set-up step must not make it look alive again.
    setStatus: (next) => status.update((current) => current === "STOPPED" ? current : next),
    run,
    runStream,
    runCommand: (command) =>
      Effect.flatMap(
        actionOf(typeof command === "string" ? new CmdRunAction({ command }) : command, CmdRunAction),
        (action) => runAs(action)
      ),
    runIPython: (code) => runAs(typeof code === "string" ? new IPythonRunCellAction({ code }) : code),
    read: (path) => runAs(typeof path === "string" ? new FileReadAction({ path }) : path),
    write: (file) => Effect.flatMap(actionOf(file, FileWriteAction), (action) => runAs(action)),
    edit: (edit) => Effect.flatMap(actionOf(edit, FileEditAction), (action) => runAs(action)),
    browse: (url) =>
      runAs(
        typeof url === "string" ? new BrowseURLAction({ url }) : url
      ),
    browseInteractive: (actions) =>
      runAs(
        typeof actions === "string" ? new BrowseInteractiveAction({ browserActions: actions }) : actions
      ),
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
      Effect.flatMap(unredacted(vars), ({ plain, secrets }) =>
        // Span attributes carry names only, never values.
        masked(backend.setEnv(plain, secrets)).pipe(
          Effect.withSpan("Runtime.addEnvVars", { attributes: { "runtime.kind": kind, names: Object.keys(vars) } })
        )),
    pause: backend.pause === undefined ? unsupported("pause") : live(pause(backend.pause)),
    // READY once the sandbox answers again (calls waiting for the resume go then).
    resume: backend.resume === undefined ? unsupported("resume") : live(backend.resume).pipe(
      Effect.andThen(status.update((s) => s === "PAUSED" ? "READY" : s))
    ),
    spawn
  }
}
