#!/usr/bin/env node
/**
 * The `effect-sandbox` command: run a command, or an interactive shell session,
 * on a runtime (the in-process CLI runtime for now).
 */
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Console, Effect, Option, Stream } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { createInterface } from "node:readline"
import { CliRuntime } from "../layers/CliRuntime.ts"
import { CmdRunAction } from "../schema/Action.ts"
import { Runtime } from "../services/Runtime.ts"
import { interactiveAction } from "./interactive.ts"

const runtimeFlags = {
  workspace: Flag.String("workspace").pipe(
    Flag.withDescription("Workspace directory (default: a temporary directory, removed afterwards)"),
    Flag.optional
  ),
  noChangeTimeout: Flag.Int("no-change-timeout").pipe(
    Flag.withDescription("Seconds without output before a command returns partial output"),
    Flag.withDefault(10)
  )
}

const runtimeLayer = (options: { readonly workspace: Option.Option<string>; readonly noChangeTimeout: number }) =>
  CliRuntime.layer({
    noChangeTimeoutSeconds: options.noChangeTimeout,
    ...(Option.isSome(options.workspace) ? { workspace: options.workspace.value } : {})
  })

const run = Command.make(
  "run",
  {
    ...runtimeFlags,
    timeout: Flag.Int("timeout").pipe(Flag.withDescription("Hard timeout in seconds"), Flag.optional),
    command: Argument.String("command").pipe(Argument.variadic({ min: 1 }))
  },
  Effect.fn(function*(options) {
    const obs = yield* Effect.gen(function*() {
      const rt = yield* Runtime
      return yield* rt.runCommand(
        new CmdRunAction({
          command: options.command.join(" "),
          blocking: true,
          ...(Option.isSome(options.timeout) ? { timeout: options.timeout.value } : {})
        })
      )
    }).pipe(Effect.provide(runtimeLayer(options)))
    if (obs.content !== "") yield* Console.log(obs.content)
    if (obs._tag === "CmdOutputObservation") {
      if (obs.exitCode === -1) yield* Console.error(obs.metadata.suffix.trim())
      process.exitCode = obs.exitCode === -1 ? 124 : obs.exitCode
    }
  })
).pipe(Command.withDescription("Run one command in a sandbox and print its output (exit code is the command's)"))

const shell = Command.make(
  "shell",
  runtimeFlags,
  (options) =>
    Effect.gen(function*() {
      const rt = yield* Runtime
      yield* Console.log(
        `effect-sandbox shell (${rt.info.kind} runtime, workspace ${rt.info.workspace}). ` +
          "Empty line: more output; '!text': send input; '!C-c': send a key; Ctrl-D: quit."
      )
      const lines = createInterface({ input: process.stdin, terminal: false })
      yield* Stream.fromAsyncIterable(lines, (cause) => cause).pipe(
        Stream.runForEach((line) =>
          rt.run(interactiveAction(line)).pipe(
            Effect.flatMap((obs) => Console.log(obs._tag === "CmdOutputObservation" ? obs.agentText : obs.content))
          )
        )
      )
    }).pipe(Effect.provide(runtimeLayer(options)))
).pipe(Command.withDescription("An interactive session on one persistent sandbox shell"))

Command.make("effect-sandbox").pipe(
  Command.withDescription("Sandboxed execution runtimes for AI coding agents"),
  Command.withSubcommands([run, shell]),
  Command.run({ version: "0.1.0" }),
  Effect.provide(NodeServices.layer),
  NodeRuntime.runMain
)
