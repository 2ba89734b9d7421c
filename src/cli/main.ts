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
import { LocalRuntime } from "../layers/LocalRuntime.ts"
import { CmdRunAction } from "../schema/Action.ts"
import { KNOWN_PLUGINS } from "../server/argv.ts"
import { serve } from "../server/serve.ts"
import { Runtime } from "../services/Runtime.ts"
import { interactiveAction } from "./interactive.ts"

const runtimeFlags = {
  runtime: Flag.Literals("runtime", ["cli", "local"]).pipe(
    Flag.withDescription("cli: in this process; local: an action server child process over HTTP"),
    Flag.withDefault("cli")
  ),
  workspace: Flag.String("workspace").pipe(
    Flag.withDescription("Workspace directory (default: a temporary directory, removed afterwards)"),
    Flag.optional
  ),
  noChangeTimeout: Flag.Int("no-change-timeout").pipe(
    Flag.withDescription("Seconds without output before a command returns partial output"),
    Flag.withDefault(10)
  )
}

const runtimeLayer = (options: {
  readonly runtime: "cli" | "local"
  readonly workspace: Option.Option<string>
  readonly noChangeTimeout: number
}) => {
  const common = {
    noChangeTimeoutSeconds: options.noChangeTimeout,
    ...(Option.isSome(options.workspace) ? { workspace: options.workspace.value } : {})
  }
  return options.runtime === "local" ? LocalRuntime.layer(common) : CliRuntime.layer(common)
}

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

const serveCommand = Command.make(
  "serve",
  {
    port: Argument.Int("port").pipe(
      Argument.withDescription("Port to listen on (0: any free port, announced on stdout)")
    ),
    workingDir: Flag.String("working-dir").pipe(Flag.withDescription("Workspace directory"), Flag.optional),
    host: Flag.String("host").pipe(
      Flag.withDescription("Address to listen on; beyond loopback, SESSION_API_KEY must be set"),
      Flag.withDefault("127.0.0.1")
    ),
    plugins: Flag.Literals("plugins", KNOWN_PLUGINS).pipe(Flag.atLeast(0)),
    username: Flag.String("username").pipe(Flag.withDefault("openhands")),
    userId: Flag.Int("user-id").pipe(Flag.withDefault(1000)),
    enableBrowser: Flag.Boolean("enable-browser").pipe(Flag.withDefault(true)),
    exitOnStdinClose: Flag.Boolean("exit-on-stdin-close").pipe(Flag.withDefault(false)),
    restrictToWorkspace: Flag.Boolean("restrict-to-workspace").pipe(Flag.withDefault(false))
  },
  (options) =>
    serve({
      ...options,
      workingDir: Option.getOrNull(options.workingDir),
      browsergymEvalEnv: null,
      ownerLease: null,
      temporaryDirs: []
    })
).pipe(Command.withDescription("Run the action server (OpenHands' wire protocol) on this machine"))

Command.make("effect-sandbox").pipe(
  Command.withDescription("Sandboxed execution runtimes for AI coding agents"),
  Command.withSubcommands([run, shell, serveCommand]),
  Command.run({ version: "0.1.0" }),
  Effect.provide(NodeServices.layer),
  NodeRuntime.runMain
)
