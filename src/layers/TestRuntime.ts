/**
 * TestRuntime: a scriptable `Runtime` for users' own tests. Swap it for a real
 * layer to test agent logic without a sandbox: queue observations or runtime
 * failures (or answer with a function), then assert on the actions your code
 * sent, exactly as it sent them. It goes through the same wrapper as every
 * runtime, so masking, spans and capability checks behave as in production.
 * With `strict`, a wrong script (an extra action, or a step that cannot answer
 * the action it meets) is a defect that fails the test, not an observation.
 *
 * @example
 * ```ts
 * const layer = TestRuntime.layer({ strict: true, capabilities: { pause: true, ipython: false } })
 * Effect.gen(function*() {
 *   const control = yield* TestRuntime
 *   yield* control.enqueue(new RuntimeDisconnectedError({ message: "gone" }))
 *   const exit = yield* Effect.exit(myAgentStep)          // sees the disconnect
 *   const sent = yield* control.actions                    // no default timeout added
 * }).pipe(Effect.provide(layer))
 * ```
 */
import { Context, Effect, Layer, Ref, Schema } from "effect"
import { captureDraftEditor } from "../editor/draftEditor.ts"
import { MISSING_TOOL_TEXT } from "../executor/ActionExecutor.ts"
import { NO_MCP_SERVERS_TEXT } from "../executor/mcp/McpHub.ts"
import { makeRuntime } from "../runtime/makeRuntime.ts"
import { makeStatus } from "../runtime/statusCell.ts"
import type { Action } from "../schema/Action.ts"
import { answeredBy, answers } from "../schema/answers.ts"
import { RuntimeDisconnectedError, type RuntimeError, type RuntimeStartError } from "../schema/errors.ts"
import type { McpTool } from "../schema/McpTool.ts"
import { ErrorObservation, type Observation } from "../schema/Observation.ts"
import type { ProcessSpec } from "../schema/process.ts"
import type { RuntimeStatus } from "../schema/RuntimeStatus.ts"
import { actionTagToWire, actionWireType } from "../schema/wire.ts"
import { Runtime, type RuntimeCapabilities, type WhilePaused } from "../services/Runtime.ts"
import { makeScriptedProcesses, type RecordedProcess, type ScriptedProcess } from "./testRuntime/scriptedProcesses.ts"

/**
 * An observation with the output chunks `runStream` emits before it (`run` returns the
 * observation alone), to test code that shows output as it comes.
 */
export class StreamedStep {
  readonly output: ReadonlyArray<string>
  readonly observation: Observation
  constructor(output: ReadonlyArray<string>, observation: Observation) {
    this.output = output
    this.observation = observation
  }
}

/**
 * One scripted answer: an observation (for `runStream`, a command's content comes as one
 * chunk before it), one with scripted chunks (`StreamedStep`), or the typed failure a real runtime gives
 * (`RuntimeDisconnectedError`, `RuntimeTimeoutError`, `RuntimeRequestError`, ...).
 */
export type ScriptedStep = Observation | StreamedStep | RuntimeError

export interface TestRuntimeOptions {
  /** Answers actions when no queued step is left (it sees the action as run: with the default timeout). */
  readonly respond?: (action: Action) => Observation | Effect.Effect<Observation, RuntimeError>
  /** What `listTools` answers (default `[]`; `[]` as well when `capabilities.mcp` is off). */
  readonly tools?: ReadonlyArray<McpTool>
  /**
   * What `info.capabilities` reports (default: pause off, the rest on). Off, a tool answers
   * as a real runtime without it does (the same `ErrorObservation` text), and `pause`/`resume`
   * fail with `UnsupportedCapabilityError`; on, `pause` makes the status PAUSED until `resume`,
   * as on Docker (calls meanwhile: see `whilePaused`).
   */
  readonly capabilities?: Partial<RuntimeCapabilities>
  /**
   * A wrong script fails the test with a defect instead of an `ErrorObservation` the code under
   * test might take in its stride: an action with no queued step and no `respond`
   * (`UnscriptedActionError`), or a queued observation that cannot answer the action it meets,
   * say a `FileReadObservation` for a command (`MisscriptedStepError`). Both name the step (its
   * place among the steps queued, from 1) and the action the code sent. Without `strict` the
   * first is an `ErrorObservation` saying nothing was scripted; the second is answered as
   * queued, which the shortcuts (`read`, `runCommand`, ...) turn into an `ErrorObservation`.
   */
  readonly strict?: boolean
  /** Calls made while paused (with `capabilities.pause`): fail with `RuntimePausedError` (default) or wait for `resume`. */
  readonly whilePaused?: WhilePaused
  /**
   * What each `spawn` prints and how it ends (nothing runs). Unanswered (undefined), a spawn
   * prints nothing and exits 0, or, with `strict`, is a defect (`UnscriptedProcessError`).
   */
  readonly processes?: (spec: ProcessSpec) => ScriptedProcess | undefined
}

/** Options of a TestRuntime whose start fails, as a real runtime's layer can. */
export interface FailingTestRuntimeOptions extends TestRuntimeOptions {
  /** The layer fails to build with this error (nothing is provided). */
  readonly failStart: RuntimeStartError
}

/** A strict TestRuntime got an action nobody scripted: a bug in the test or in the code under test. */
export class UnscriptedActionError extends Schema.TaggedError<UnscriptedActionError>()("UnscriptedActionError", {
  /** The step this action would have taken: one more than the steps queued so far. */
  step: Schema.Number,
  /** The action's OpenHands type (`"run"`, `"read"`, ...). */
  action: Schema.String,
  message: Schema.String
}) {}

/**
 * A strict TestRuntime's queued step cannot answer the action it met (a `FileReadObservation`
 * for a command): the script and the code under test disagree about what happens next.
 */
export class MisscriptedStepError extends Schema.TaggedError<MisscriptedStepError>()("MisscriptedStepError", {
  /** The step's place among the steps queued, from 1. */
  step: Schema.Number,
  /** The queued observation's tag. */
  observation: Schema.String,
  /** The OpenHands types of the actions it can answer (`"browse or browse_interactive"`). */
  expected: Schema.String,
  /** The OpenHands type of the action the code sent. */
  action: Schema.String,
  message: Schema.String
}) {}

/** A file copy the code under test asked for. */
export interface RecordedCopy {
  readonly direction: "to" | "from"
  readonly source: string
  readonly destination: string
}

const DEFAULT_CAPABILITIES: RuntimeCapabilities = {
  pause: false,
  ipython: true,
  browser: true,
  mcp: true,
  snapshot: false
}

/** What a real runtime without the tool answers (the executor's texts; the MCP hub's with no server). */
const withoutTool = (action: Action, capabilities: RuntimeCapabilities): ErrorObservation | undefined => {
  switch (action._tag) {
    case "IPythonRunCellAction":
      return capabilities.ipython ? undefined : new ErrorObservation({ content: MISSING_TOOL_TEXT.ipython })
    case "BrowseURLAction":
    case "BrowseInteractiveAction":
      return capabilities.browser ? undefined : new ErrorObservation({ content: MISSING_TOOL_TEXT.browser })
    case "McpCallAction":
      return capabilities.mcp ? undefined : new ErrorObservation({ content: NO_MCP_SERVERS_TEXT })
    default:
      return undefined
  }
}

/** The field that tells one action from another of its type, for a message. */
const subject = (action: Action): string => {
  switch (action._tag) {
    case "CmdRunAction":
      return action.command
    case "IPythonRunCellAction":
      return action.code
    case "FileReadAction":
    case "FileWriteAction":
      return action.path
    case "FileEditAction":
      return `${action.command} ${action.path}`
    case "BrowseURLAction":
      return action.url
    case "BrowseInteractiveAction":
      return action.browserActions
    case "McpCallAction":
      return action.name
  }
}

/** An action for a message: its OpenHands type and what tells it apart (`"run" action ("make")`). */
const described = (action: Action) => `"${actionWireType(action)}" action (${JSON.stringify(subject(action))})`

const queuedBefore = (steps: number) =>
  steps === 0 ? "no step was" : steps === 1 ? "only 1 step was" : `only ${steps} steps were`

/** The defect of a strict TestRuntime's unscripted action, the `step`-th. */
const unscripted = (step: number, action: Action) =>
  new UnscriptedActionError({
    step,
    action: actionWireType(action),
    message: `TestRuntime (strict) step ${step}: got an unscripted ${described(action)}, but ${
      queuedBefore(step - 1)
    } queued: enqueue an answer for it or pass \`respond\`.`
  })

/** The defect of a strict TestRuntime's `step`-th queued observation, which cannot answer `action`. */
const misscripted = (step: number, observation: Observation, action: Action) => {
  const expected = answeredBy(observation).map(actionTagToWire).map((type) => `"${type}"`).join(" or ")
  return new MisscriptedStepError({
    step,
    observation: observation._tag,
    expected,
    action: actionWireType(action),
    message:
      `TestRuntime (strict) step ${step}: the queued ${observation._tag} answers a ${expected} action, but the code sent a ${
        described(action)
      }.`
  })
}

/** The steps still queued, and how many were taken. */
interface Script {
  readonly queued: ReadonlyArray<ScriptedStep>
  readonly taken: number
}

/** The next step (none if nothing is queued), the place among the steps an action meeting it takes, and the script after. */
const takeStep = ({ queued, taken }: Script) => {
  const next: ScriptedStep | undefined = queued[0]
  const step = taken + 1
  const after: Script = next === undefined ? { queued, taken } : { queued: queued.slice(1), taken: step }
  return [{ next, step }, after] as const
}

const isFailure = (step: ScriptedStep): step is RuntimeError => step instanceof Error

/** What a real runtime would stream for an unscripted-output observation: a command's content, whole. */
const streamedAsOneChunk = (observation: Observation): StreamedStep =>
  new StreamedStep(
    observation._tag === "CmdOutputObservation" && observation.content !== "" ? [observation.content] : [],
    observation
  )

export class TestRuntime extends Context.Service<TestRuntime, {
  /** Actions received so far, in order: the very objects the program sent (no default timeout added). */
  readonly actions: Effect.Effect<ReadonlyArray<Action>>
  /**
   * Queue steps answered, in order, to the next actions: an observation is returned, a
   * `RuntimeError` fails the action (a `RuntimeDisconnectedError` also sets the status to
   * `ERROR_RUNTIME_DISCONNECTED`, as the HTTP client does).
   */
  readonly enqueue: (...steps: ReadonlyArray<ScriptedStep>) => Effect.Effect<void>
  /** Environment variables added so far (secret values included: it is a test double). */
  readonly env: Effect.Effect<Readonly<Record<string, string>>>
  readonly copies: Effect.Effect<ReadonlyArray<RecordedCopy>>
  readonly setStatus: (status: RuntimeStatus) => Effect.Effect<void>
  /** Background processes spawned so far, with the stdin, signals and release each got. */
  readonly processes: Effect.Effect<ReadonlyArray<RecordedProcess>>
}>()("effect-sandbox/TestRuntime") {
  /**
   * Provides `Runtime` (scripted) and `TestRuntime` (its controls). With `failStart` the
   * layer fails with that `RuntimeStartError` instead.
   *
   * @example
   * ```ts
   * // Every action must meet a queued step that can answer it; no IPython, as on a runtime started without it.
   * TestRuntime.layer({ strict: true, capabilities: { ipython: false } })
   * // A runtime that cannot start: providing it fails with this error.
   * TestRuntime.layer({ failStart: new RuntimeStartError({ message: "image not found" }) })
   * // Then, in the test: `yield* control.enqueue(observation, new RuntimeTimeoutError({ message }))`.
   * ```
   */
  static layer(options: FailingTestRuntimeOptions): Layer.Layer<Runtime | TestRuntime, RuntimeStartError>
  static layer(options?: TestRuntimeOptions): Layer.Layer<Runtime | TestRuntime>
  static layer(
    options: TestRuntimeOptions & { readonly failStart?: RuntimeStartError } = {}
  ): Layer.Layer<Runtime | TestRuntime, RuntimeStartError> {
    return Layer.effectContext(Effect.gen(function*() {
      if (options.failStart !== undefined) return yield* options.failStart
      const capabilities = { ...DEFAULT_CAPABILITIES, ...options.capabilities }
      const status = yield* makeStatus
      const actions = yield* Ref.make<ReadonlyArray<Action>>([])
      // The steps still queued, and how many were taken: a strict defect names a step by its place.
      const script = yield* Ref.make<Script>({ queued: [], taken: 0 })
      const env = yield* Ref.make<Readonly<Record<string, string>>>({})
      const copies = yield* Ref.make<ReadonlyArray<RecordedCopy>>([])
      const recordCopy = (copy: RecordedCopy) => Ref.update(copies, (all) => [...all, copy])
      const processes = makeScriptedProcesses(options.processes, options.strict === true)

      const answer = (action: Action): Effect.Effect<Observation | StreamedStep, RuntimeError> =>
        Effect.gen(function*() {
          const missing = withoutTool(action, capabilities)
          if (missing !== undefined) return missing
          // One update, so that actions run side by side each take their own step.
          const { next, step } = yield* Ref.modify(script, takeStep)
          if (next !== undefined) {
            if (!isFailure(next)) {
              const observation = next instanceof StreamedStep ? next.observation : next
              if (options.strict === true && !answers(action, observation)) {
                return yield* Effect.die(misscripted(step, observation, action))
              }
              return next
            }
            if (next instanceof RuntimeDisconnectedError) yield* status.set("ERROR_RUNTIME_DISCONNECTED")
            return yield* next
          }
          if (options.respond === undefined) {
            if (options.strict === true) return yield* Effect.die(unscripted(step, action))
            return new ErrorObservation({
              content: `TestRuntime has no scripted observation for this "${actionWireType(action)}" action.`
            })
          }
          const response = options.respond(action)
          return Effect.isEffect(response) ? yield* response : response
        })

      const runtime = makeRuntime({
        info: { id: "test", kind: "test", workspace: "/workspace", urls: {}, capabilities },
        defaultTimeoutSeconds: 120,
        execute: (action, onOutput) =>
          answer(action).pipe(Effect.map((step) => {
            const { output, observation } = step instanceof StreamedStep ? step : streamedAsOneChunk(step)
            if (onOutput !== undefined) output.forEach(onOutput)
            return observation
          })),
        // The program's own action object: the wrapper's copy with the default timeout is not what it sent.
        received: (action) => Ref.update(actions, (all) => [...all, action]),
        copyTo: (source, destination) => recordCopy({ direction: "to", source, destination }),
        copyFrom: (source, destination) => recordCopy({ direction: "from", source, destination }),
        listFiles: () => Effect.succeed([]),
        listTools: Effect.succeed(capabilities.mcp ? options.tools ?? [] : []),
        setEnv: (vars) => Ref.update(env, (all) => ({ ...all, ...vars })),
        draftEditor: yield* captureDraftEditor,
        ...(capabilities.pause ? { pause: Effect.void, resume: Effect.void } : {}),
        ...(options.whilePaused === undefined ? {} : { whilePaused: options.whilePaused }),
        processes: processes.control
      }, status)
      yield* status.set("READY")

      return Context.make(Runtime, runtime).pipe(Context.add(TestRuntime, {
        actions: Ref.get(actions),
        enqueue: (...steps) => Ref.update(script, ({ queued, taken }) => ({ queued: [...queued, ...steps], taken })),
        env: Ref.get(env),
        copies: Ref.get(copies),
        setStatus: (s) => status.set(s),
        processes: processes.recorded
      }))
    }))
  }
}
