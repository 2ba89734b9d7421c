/**
 * Builds the `Runtime` service from a transport ("backend"): the in-process
 * executor, the HTTP client, or a test script. Everything every runtime must do
 * the same way lives here once: the default timeout, spans and metrics, masking
 * of secrets, the status stream, typed shortcuts and capability checks. The parts
 * are modules of their own: `callGate.ts` (released and paused runtimes),
 * `envVars.ts`, `spawnProcess.ts`, `shortcuts.ts` and `unsupported.ts`.
 */
import { Effect, Option, Queue, Stream } from "effect"
import { isDraftEdit } from "../editor/draftEditor.ts"
import type { Action } from "../schema/Action.ts"
import { type ActionEvent, FinalObservation, OutputChunk } from "../schema/ActionEvent.ts"
import { copyWith } from "../schema/copy.ts"
import { InvalidOptionsError, type RuntimeError, RuntimeStartError } from "../schema/errors.ts"
import type { Observation } from "../schema/Observation.ts"
import { SecretMask } from "../schema/secrets.ts"
import type { EnvValue } from "../services/EnvValue.ts"
import type { RuntimeShape } from "../services/Runtime.ts"
import type { RuntimeBackend } from "../services/RuntimeBackend.ts"
import { makeCallGate } from "./callGate.ts"
import { unredactedEnv } from "./envVars.ts"
import { makeShortcuts } from "./shortcuts.ts"
import { makeSpawn, type Masked } from "./spawnProcess.ts"
import type { StatusCell } from "./statusCell.ts"
import { instrumentAction } from "./telemetry.ts"
import { unsupported } from "./unsupported.ts"

/** Why a runtime without `snapshot` has none (docs/snapshots.md has the table). */
const SNAPSHOT_WHY = "its provider keeps no snapshots of a sandbox (docs/snapshots.md says which runtimes do)"

export const makeRuntime = (
  backend: RuntimeBackend,
  status: StatusCell
): RuntimeShape => {
  const mask = new SecretMask()
  const kind = backend.info.kind
  const gate = makeCallGate(kind, status, backend.whilePaused)

  /**
   * Secrets masked in what reaches the caller, results and typed errors (whose texts may echo
   * output), as defence in depth: the executor already masked before truncating, a server that
   * does not (OpenHands') did not. Every backend call goes through here, so it is also gated.
   */
  const masked: Masked = (effect) =>
    gate.unpaused(effect).pipe(Effect.map((a) => mask.deep(a)), Effect.mapError((e) => mask.deep(e)))

  /**
   * Why IPython cannot run (its kernel did not start): a cell fails with it on every runtime, as
   * CliRuntime's executor does, instead of a server's 500 read as a lost server.
   */
  const noKernel = backend.info.capabilities.unavailable?.ipython

  /** The action's own span and metrics (`instrumentAction`) name it; a draft edit goes to the draft editor. */
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

  return {
    info: backend.info,
    status: status.changes,
    currentStatus: status.get,
    // A released runtime stays STOPPED: a late set-up step must not make it look alive again.
    setStatus: (next) => status.update((current) => current === "STOPPED" ? current : next),
    run,
    runStream,
    ...makeShortcuts(kind, run),
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
      Effect.flatMap(unredactedEnv(vars, mask), ({ plain, secrets }) =>
        // Span attributes carry names only, never values.
        masked(backend.setEnv(plain, secrets)).pipe(
          Effect.withSpan("Runtime.addEnvVars", { attributes: { "runtime.kind": kind, names: Object.keys(vars) } })
        )),
    pause: backend.pause === undefined ? unsupported(kind, "pause") : gate.live(gate.pause(backend.pause)),
    // READY once the sandbox answers again (calls waiting for the resume go then).
    resume: backend.resume === undefined ? unsupported(kind, "resume") : gate.live(backend.resume).pipe(
      Effect.andThen(status.update((s) => s === "PAUSED" ? "READY" : s))
    ),
    snapshot: (options = {}) =>
      backend.snapshot === undefined
        ? unsupported(kind, "snapshot", SNAPSHOT_WHY)
        : gate.live(backend.snapshot(options)).pipe(
          Effect.withSpan("Runtime.snapshot", { attributes: { "runtime.kind": kind } })
        ),
    fork: (count) =>
      backend.fork === undefined
        ? unsupported(kind, "fork", SNAPSHOT_WHY)
        : !(Number.isInteger(count) && count >= 1)
        ? Effect.fail(
          new InvalidOptionsError({ message: `fork: count must be a whole number, 1 or more (got ${count}).` })
        )
        : gate.live(Effect.void).pipe(
          Effect.andThen(backend.fork(count)),
          Effect.withSpan("Runtime.fork", { attributes: { "runtime.kind": kind, count } })
        ),
    spawn: makeSpawn(backend, mask, masked)
  }
}
