#!/usr/bin/env node
/**
 * The `effect-sandbox` command: run a command, or an interactive shell session,
 * on a runtime (`--runtime cli`, in this process; `local`; `docker`; `kubernetes`; `e2b`; `daytona`;
 * `remote`).
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Console, Effect, Layer, Logger, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { CmdRunAction } from "../schema/Action.ts"
import { invalidOptions } from "../schema/issues.ts"
import { KNOWN_PLUGINS } from "../server/argv.ts"
import { Runtime, type RuntimeShape } from "../services/Runtime.ts"
import { otlpLayerFromEnv } from "../telemetry/otlp.ts"
import { CLI_RUNTIME_HELP, CLI_RUNTIMES, cliRuntimeLayer, type CliRuntimeOptions } from "./runtimeLayer.ts"
import { EXIT_HINT, shellSession } from "./shellSession.ts"
import { startProgressLine } from "./startProgressLine.ts"

const runtimeFlags = {
  runtime: Flag.Literals("runtime", CLI_RUNTIMES).pipe(
    Flag.withDescription(
      Object.entries(CLI_RUNTIME_HELP).map(([name, help]) => `${name}: ${help}`).join("; ")
    ),
    Flag.withDefault("cli")
  ),
  image: Flag.String("image").pipe(
    Flag.withDescription(
      "Base image of --runtime docker, kubernetes or remote (default: SANDBOX_BASE_CONTAINER_IMAGE, else the runtime's default); docker and kubernetes pull it when the engine lacks it"
    ),
    Flag.optional
  ),
  apiUrl: Flag.String("api-url").pipe(
    Flag.withDescription(
      "The runtime API of --runtime remote (default http://localhost:8000); its key: SANDBOX_API_KEY"
    ),
    Flag.optional
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

/**
 * stdout carries the command's output only: logs (an image being built) go to stderr, and a runtime
 * that cannot start or a bad option ends the command with its one-line message there (exit code 1).
 */
const forUsers = <A, R>(
  effect: Effect.Effect<A, { readonly message: string }, R>
): Effect.Effect<A | void, never, R> =>
  effect.pipe(
    Effect.catch((error) =>
      Console.error(`effect-sandbox: ${error.message}`).pipe(
        Effect.andThen(Effect.sync(() => void (process.exitCode = 1)))
      )
    ),
    Effect.provideService(Logger.LogToStderr, true)
  )

/**
 * Where a command runs, said on stderr before it does: a temporary workspace is gone when the CLI
 * exits, so its path is worth having in a log. Said on every run, not only on a terminal: stderr is
 * where diagnostics go whatever it is connected to, stdout stays the command's output either way,
 * and a CI log, where the line is most needed afterwards, has no terminal.
 */
const whereItRuns = (rt: RuntimeShape) => `${rt.info.kind} runtime, workspace ${rt.info.workspace}`

/** The runtime of the flags, its start shown on stderr as it goes (startProgressLine.ts). */
const runtimeOf = (options: CliRuntimeOptions) => cliRuntimeLayer(options).pipe(Layer.provide(startProgressLine))

const run = Command.make(
  "run",
  {
    ...runtimeFlags,
    timeout: Flag.Int("timeout").pipe(Flag.withDescription("Hard timeout in seconds"), Flag.optional),
    command: Argument.String("command").pipe(Argument.variadic({ min: 1 }))
  },
  Effect.fn(function*(options) {
    // Made before the runtime starts: a bad --timeout is one line (InvalidOptionsError), and nothing starts.
    const action = yield* CmdRunAction.makeEffect({
      command: options.command.join(" "),
      blocking: true,
      ...(Option.isSome(options.timeout) ? { timeout: options.timeout.value } : {})
    }).pipe(Effect.mapError((issue) => invalidOptions(CmdRunAction.identifier, issue)))
    const obs = yield* Effect.gen(function*() {
      const rt = yield* Runtime
      yield* Console.error(`effect-sandbox run (${whereItRuns(rt)})`)
      return yield* rt.runCommand(action)
    }).pipe(Effect.provide(runtimeOf(options)))
    if (obs.content !== "") yield* Console.log(obs.content)
    if (obs._tag === "CmdOutputObservation") {
      if (obs.exitCode === -1) yield* Console.error(obs.metadata.suffix.trim())
      process.exitCode = obs.exitCode === -1 ? 124 : obs.exitCode
    }
  }, forUsers)
).pipe(Command.withDescription("Run one command in a sandbox and print its output (exit code is the command's)"))

const shell = Command.make(
  "shell",
  runtimeFlags,
  (options) =>
    Effect.gen(function*() {
      const rt = yield* Runtime
      yield* Console.error(
        `effect-sandbox shell (${whereItRuns(rt)}). Output streams as it ` +
          `comes; while a command runs, Ctrl-C goes to it and typed lines are its input. ${EXIT_HINT}`
      )
      process.exitCode = yield* shellSession(rt)
    }).pipe(Effect.scoped, Effect.provide(runtimeOf(options)), forUsers)
).pipe(Command.withDescription("An interactive session on one persistent sandbox shell, its output streamed"))

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
    // The server's modules are loaded by `serve` alone: `run` and `shell` start without them.
    Effect.promise(() => import("../server/serve.ts")).pipe(Effect.flatMap(({ serve }) =>
      serve({
        ...options,
        workingDir: Option.getOrNull(options.workingDir),
        browsergymEvalEnv: null,
        ownerLease: null,
        temporaryDirs: []
      })
    ))
).pipe(Command.withDescription("Run the action server (OpenHands' wire protocol) on this machine"))

Command.make("effect-sandbox").pipe(
  Command.withDescription("Sandboxed execution runtimes for AI coding agents"),
  Command.withSubcommands([run, shell, serveCommand]),
  Command.run({ version: "0.1.0" }),
  Effect.provide(NodeServices.layer),
  Effect.provide(otlpLayerFromEnv()),
  NodeRuntime.runMain
)
