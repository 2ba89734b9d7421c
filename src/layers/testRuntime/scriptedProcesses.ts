/**
 * TestRuntime's background processes: nothing runs; each `spawn` gets the output and exit
 * its script gives, and everything the program did to it (stdin written, signals, release)
 * is recorded for the test to assert on.
 */
import { Effect, Schema, Stream } from "effect"
import type { RuntimeError } from "../../schema/errors.ts"
import {
  ProcessError,
  type ProcessExit,
  processNotFound,
  type ProcessOutput,
  type ProcessSpec
} from "../../schema/process.ts"
import type { ProcessControl } from "../../services/Processes.ts"

/** What a scripted process prints and how it ends (default: nothing, exit code 0; a signal sent first ends it). */
export interface ScriptedProcess {
  readonly output?: ReadonlyArray<ProcessOutput>
  readonly exit?: ProcessExit
  readonly pid?: number
}

/** A process the program spawned on a TestRuntime, as it left it. */
export interface RecordedProcess {
  readonly id: string
  readonly spec: ProcessSpec
  /** Everything written to its stdin, in order. */
  readonly stdin: string
  readonly stdinClosed: boolean
  readonly signals: ReadonlyArray<string>
  /** Its scope closed (a real runtime would have killed it). */
  readonly released: boolean
}

/** A strict TestRuntime got a `spawn` nobody scripted. */
export class UnscriptedProcessError extends Schema.TaggedError<UnscriptedProcessError>()("UnscriptedProcessError", {
  command: Schema.String,
  message: Schema.String
}) {}

interface Entry {
  record: RecordedProcess
  readonly script: ScriptedProcess
}

export const makeScriptedProcesses = (
  script: ((spec: ProcessSpec) => ScriptedProcess | undefined) | undefined,
  strict: boolean
) => {
  const entries = new Map<string, Entry>()
  const all: Array<Entry> = []
  const find = (id: string) =>
    Effect.suspend(() => {
      const entry = entries.get(id)
      return entry === undefined ? Effect.fail(processNotFound(id)) : Effect.succeed(entry)
    })
  const update = (entry: Entry, change: Partial<RecordedProcess>) => {
    entry.record = { ...entry.record, ...change }
  }

  const control: ProcessControl<RuntimeError> = {
    start: (spec) =>
      Effect.suspend(() => {
        const scripted = script?.(spec)
        if (scripted === undefined && strict) {
          return Effect.die(
            new UnscriptedProcessError({
              command: spec.command,
              message: `TestRuntime (strict) got an unscripted spawn of ${
                JSON.stringify(spec.command)
              }: answer it with the \`processes\` option.`
            })
          )
        }
        const id = String(all.length + 1)
        const entry: Entry = {
          record: { id, spec, stdin: "", stdinClosed: false, signals: [], released: false },
          script: scripted ?? {}
        }
        entries.set(id, entry)
        all.push(entry)
        return Effect.succeed({ id, pid: scripted?.pid ?? 1000 + all.length })
      }),
    output: (id) => Effect.map(find(id), (entry) => Stream.fromIterable(entry.script.output ?? [])),
    write: (id, text) =>
      Effect.flatMap(find(id), (entry) =>
        entry.record.stdinClosed
          ? Effect.fail(new ProcessError({ message: `The stdin of background process ${id} is closed.` }))
          : Effect.sync(() => update(entry, { stdin: entry.record.stdin + text }))),
    closeStdin: (id) => Effect.map(find(id), (entry) => update(entry, { stdinClosed: true })),
    signal: (id, signal) =>
      Effect.map(find(id), (entry) => update(entry, { signals: [...entry.record.signals, signal] })),
    wait: (id) =>
      Effect.map(find(id), ({ record, script: scripted }) =>
        scripted.exit ?? (record.signals.length > 0
          ? { exitCode: null, signal: record.signals[0]! }
          : { exitCode: 0, signal: null })),
    remove: (id) =>
      Effect.map(find(id), (entry) => {
        entries.delete(id)
        update(entry, { released: true })
      })
  }
  return { control, recorded: Effect.sync(() => all.map((entry) => entry.record)) }
}
