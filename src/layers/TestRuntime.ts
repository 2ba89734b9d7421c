/**
 * TestRuntime: a scriptable `Runtime` for users' own tests. Swap it for a real
 * layer to test agent logic without a sandbox: queue observations (or answer
 * with a function), then assert on the actions your code sent. It goes through
 * the same wrapper as every runtime, so default timeouts, masking and spans
 * behave as in production.
 */
import { Context, Effect, Layer, Ref } from "effect"
import type { Action } from "../schema/Action.ts"
import type { McpTool } from "../schema/McpTool.ts"
import { ErrorObservation, type Observation } from "../schema/Observation.ts"
import type { RuntimeStatus } from "../schema/RuntimeStatus.ts"
import { actionWireType } from "../schema/wire.ts"
import { Runtime } from "../services/Runtime.ts"
import { makeRuntime } from "./internal/makeRuntime.ts"
import { makeStatus } from "./internal/statusCell.ts"

export interface TestRuntimeOptions {
  /** Answers actions when no queued observation is left. */
  readonly respond?: (action: Action) => Observation | Effect.Effect<Observation>
  /** What `listTools` answers (default `[]`). */
  readonly tools?: ReadonlyArray<McpTool>
}

/** A file copy the code under test asked for. */
export interface RecordedCopy {
  readonly direction: "to" | "from"
  readonly source: string
  readonly destination: string
}

export class TestRuntime extends Context.Service<TestRuntime, {
  /** Actions received so far, in order (with the default timeout applied). */
  readonly actions: Effect.Effect<ReadonlyArray<Action>>
  /** Queue observations answered, in order, to the next actions. */
  readonly enqueue: (...observations: ReadonlyArray<Observation>) => Effect.Effect<void>
  /** Environment variables added so far (secret values included: it is a test double). */
  readonly env: Effect.Effect<Readonly<Record<string, string>>>
  readonly copies: Effect.Effect<ReadonlyArray<RecordedCopy>>
  readonly setStatus: (status: RuntimeStatus) => Effect.Effect<void>
}>()("effect-sandbox/TestRuntime") {
  /** Provides `Runtime` (scripted) and `TestRuntime` (its controls). */
  static layer(options: TestRuntimeOptions = {}): Layer.Layer<Runtime | TestRuntime> {
    return Layer.effectContext(Effect.gen(function*() {
      const status = yield* makeStatus
      const actions = yield* Ref.make<ReadonlyArray<Action>>([])
      const queue = yield* Ref.make<ReadonlyArray<Observation>>([])
      const env = yield* Ref.make<Readonly<Record<string, string>>>({})
      const copies = yield* Ref.make<ReadonlyArray<RecordedCopy>>([])
      const recordCopy = (copy: RecordedCopy) => Ref.update(copies, (all) => [...all, copy])

      const answer = (action: Action): Effect.Effect<Observation> =>
        Effect.gen(function*() {
          yield* Ref.update(actions, (all) => [...all, action])
          const next = yield* Ref.modify(queue, (q) => [q[0], q.slice(1)] as const)
          if (next !== undefined) return next
          if (options.respond === undefined) {
            return new ErrorObservation({
              content: `TestRuntime has no scripted observation for this "${actionWireType(action)}" action.`
            })
          }
          const response = options.respond(action)
          return Effect.isEffect(response) ? yield* response : response
        })

      const runtime = makeRuntime({
        info: {
          id: "test",
          kind: "test",
          workspace: "/workspace",
          urls: {},
          capabilities: { pause: false, ipython: true, browser: true, mcp: true }
        },
        defaultTimeoutSeconds: 120,
        execute: answer,
        copyTo: (source, destination) => recordCopy({ direction: "to", source, destination }),
        copyFrom: (source, destination) => recordCopy({ direction: "from", source, destination }),
        listFiles: () => Effect.succeed([]),
        listTools: Effect.succeed(options.tools ?? []),
        setEnv: (vars) => Ref.update(env, (all) => ({ ...all, ...vars }))
      }, status)
      yield* status.set("READY")

      return Context.make(Runtime, runtime).pipe(Context.add(TestRuntime, {
        actions: Ref.get(actions),
        enqueue: (...observations) => Ref.update(queue, (q) => [...q, ...observations]),
        env: Ref.get(env),
        copies: Ref.get(copies),
        setStatus: (s) => status.set(s)
      }))
    }))
  }
}
