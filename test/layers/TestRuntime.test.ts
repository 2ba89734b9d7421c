import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Redacted, Stream } from "effect"
import {
  BrowserOutputObservation,
  CmdOutputMetadata,
  CmdOutputObservation,
  CmdRunAction,
  ErrorObservation,
  FileReadObservation,
  McpCallAction,
  McpTool,
  MisscriptedStepError,
  ProcessError,
  ProcessNotFoundError,
  Runtime,
  RuntimeDisconnectedError,
  RuntimeRequestError,
  RuntimeStartError,
  RuntimeTimeoutError,
  StreamedStep,
  TestRuntime,
  UnscriptedActionError,
  UnscriptedProcessError,
  UnsupportedCapabilityError
} from "../../src/index.ts"

const built = (command: string) =>
  new CmdOutputObservation({ content: "built", command, metadata: new CmdOutputMetadata({ exitCode: 0 }) })

describe("TestRuntime", () => {
  it.effect("lists the tools it was given, and none by default", () =>
    Effect.gen(function*() {
      const tool = new McpTool({ server: "s", name: "t", inputSchema: { type: "object" } })
      assert.deepStrictEqual(yield* Effect.provide(Runtime.use((rt) => rt.listTools), TestRuntime.layer()), [])
      const listed = yield* Effect.provide(Runtime.use((rt) => rt.listTools), TestRuntime.layer({ tools: [tool] }))
      assert.deepStrictEqual(listed, [tool])
      assert.strictEqual(listed[0]!.description, "")
    }))

  it.effect("answers queued observations in order and records the actions", () =>
    Effect.gen(function*() {
      const control = yield* TestRuntime
      const rt = yield* Runtime
      yield* control.enqueue(
        new CmdOutputObservation({
          content: "built",
          command: "make",
          metadata: new CmdOutputMetadata({ exitCode: 0 })
        })
      )
      const first = yield* rt.runCommand("make")
      assert.strictEqual(first.content, "built")
      const second = yield* rt.runCommand("make again")
      assert.instanceOf(second, ErrorObservation)
      assert.strictEqual(second.content, "TestRuntime has no scripted observation for this \"run\" action.")
      const actions = yield* control.actions
      assert.deepStrictEqual(actions.map((a) => (a as CmdRunAction).command), ["make", "make again"])
    }).pipe(Effect.provide(TestRuntime.layer())))

  it.effect("records actions exactly as the program sent them (the default timeout only reaches the answer)", () =>
    Effect.gen(function*() {
      const control = yield* TestRuntime
      const rt = yield* Runtime
      const sent = new CmdRunAction({ command: "ls" })
      const answers = [
        yield* rt.run(sent),
        yield* rt.runCommand("make"),
        yield* rt.runCommand(new CmdRunAction({ command: "slow", timeout: 5 }))
      ]
      assert.deepStrictEqual(answers.map((o) => (o as CmdOutputObservation).command), [
        "ls @120",
        "make @120",
        "slow @5"
      ])
      const actions = yield* control.actions
      assert.strictEqual(actions[0], sent)
      assert.deepStrictEqual(actions.map((a) => a.timeout), [undefined, undefined, 5])
      assert.deepStrictEqual(actions.map((a) => (a as CmdRunAction).command), ["ls", "make", "slow"])
    }).pipe(Effect.provide(TestRuntime.layer({
      // What runs still gets SandboxConfig's default hard timeout, as on every runtime.
      respond: (action) => built(`${(action as CmdRunAction).command} @${action.timeout}`)
    }))))

  it.effect("answers with a function, and masks secrets like every runtime", () =>
    Effect.gen(function*() {
      const rt = yield* Runtime
      const control = yield* TestRuntime
      yield* rt.addEnvVars({ TOKEN: Redacted.make("hunter2"), PLAIN: "p" })
      const read = yield* rt.read("/workspace/secret.txt")
      assert.instanceOf(read, FileReadObservation)
      assert.strictEqual(read.content, "token=<redacted>")
      assert.deepStrictEqual(yield* control.env, { TOKEN: "hunter2", PLAIN: "p" })
      assert.strictEqual(yield* rt.currentStatus, "READY")
      yield* control.setStatus("ERROR")
      assert.strictEqual(yield* rt.currentStatus, "ERROR")
    }).pipe(Effect.provide(TestRuntime.layer({
      respond: (action) =>
        new FileReadObservation({ content: "token=hunter2", path: (action as { path: string }).path })
    }))))
})

describe("TestRuntime scripted failures", () => {
  it.effect("a queued runtime error fails that action with it; the script goes on", () =>
    Effect.gen(function*() {
      const control = yield* TestRuntime
      const rt = yield* Runtime
      yield* control.enqueue(
        new RuntimeTimeoutError({ message: "no answer in 125 s" }),
        new RuntimeRequestError({ status: 400, message: "bad action" }),
        built("make"),
        new RuntimeDisconnectedError({ message: "the server died" })
      )
      const timedOut = yield* Effect.flip(rt.runCommand("make"))
      assert.instanceOf(timedOut, RuntimeTimeoutError)
      assert.strictEqual(timedOut.message, "no answer in 125 s")
      const refused = yield* Effect.flip(rt.read("/workspace/a"))
      assert.instanceOf(refused, RuntimeRequestError)
      assert.strictEqual(refused.status, 400)
      assert.strictEqual((yield* rt.runCommand("make")).content, "built")
      assert.strictEqual(yield* rt.currentStatus, "READY")
      const gone = yield* Effect.flip(rt.runCommand("make"))
      assert.instanceOf(gone, RuntimeDisconnectedError)
      assert.strictEqual(gone.message, "the server died")
      // As the HTTP client reports a dropped connection.
      assert.strictEqual(yield* rt.currentStatus, "ERROR_RUNTIME_DISCONNECTED")
      assert.strictEqual((yield* control.actions).length, 4)
    }).pipe(Effect.provide(TestRuntime.layer())))

  it.effect("respond can fail with a runtime error", () =>
    Effect.gen(function*() {
      const rt = yield* Runtime
      const error = yield* Effect.flip(rt.runCommand("sleep 999"))
      assert.instanceOf(error, RuntimeTimeoutError)
      assert.strictEqual(error.message, "sleep 999 timed out")
    }).pipe(Effect.provide(TestRuntime.layer({
      respond: (action) =>
        Effect.fail(new RuntimeTimeoutError({ message: `${(action as CmdRunAction).command} timed out` }))
    }))))

  it.effect("failStart makes the layer fail with that RuntimeStartError", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Effect.provide(
        Runtime.use((rt) => rt.runCommand("make")),
        TestRuntime.layer({ failStart: new RuntimeStartError({ message: "image not found" }) })
      ))
      assert.instanceOf(error, RuntimeStartError)
      assert.strictEqual(error.message, "image not found")
      // Type-level: without failStart the layer cannot fail (a failing overload would not compile here).
      const cannotFail: Layer.Layer<Runtime | TestRuntime, never> = TestRuntime.layer({ strict: true })
      assert.isTrue(Layer.isLayer(cannotFail))
    }))
})

describe("TestRuntime capabilities", () => {
  it.effect("by default: every tool, no pause (UnsupportedCapabilityError as CliRuntime gives)", () =>
    Effect.gen(function*() {
      const rt = yield* Runtime
      assert.deepStrictEqual(rt.info.capabilities, {
        pause: false,
        ipython: true,
        browser: true,
        mcp: true,
        snapshot: false
      })
      for (const [call, capability] of [[rt.pause, "pause"], [rt.resume, "resume"]] as const) {
        const error = yield* Effect.flip(call)
        assert.instanceOf(error, UnsupportedCapabilityError)
        assert.strictEqual(error.runtime, "test")
        assert.strictEqual(error.capability, capability)
      }
    }).pipe(Effect.provide(TestRuntime.layer())))

  it.effect("reports what it is given; a tool that is off answers as a runtime without it", () =>
    Effect.gen(function*() {
      const control = yield* TestRuntime
      const rt = yield* Runtime
      assert.deepStrictEqual(rt.info.capabilities, {
        pause: true,
        ipython: false,
        browser: false,
        mcp: false,
        snapshot: false
      })
      yield* rt.pause
      yield* rt.resume
      yield* control.enqueue(built("make"))
      const texts = [
        yield* rt.runIPython("1 + 1"),
        yield* rt.browse("https://example.com"),
        yield* rt.browseInteractive("click('1')"),
        yield* rt.callTool({ name: "t" })
      ].map((o) => {
        assert.instanceOf(o, ErrorObservation)
        return o.content
      })
      assert.deepStrictEqual(texts, [
        // The texts CliRuntime, LocalRuntime and DockerRuntime answer without the tool.
        "JupyterRequirement not found. Unable to run IPython action.",
        "Browser functionality is not supported or disabled.",
        "Browser functionality is not supported or disabled.",
        "No MCP servers configured"
      ])
      assert.deepStrictEqual(yield* rt.listTools, [])
      // They did not take the scripted answer, and were recorded.
      assert.strictEqual((yield* rt.runCommand("make")).content, "built")
      assert.strictEqual((yield* control.actions).length, 5)
    }).pipe(Effect.provide(TestRuntime.layer({
      capabilities: { pause: true, ipython: false, browser: false, mcp: false },
      tools: [new McpTool({ server: "s", name: "t", inputSchema: { type: "object" } })]
    }))))
})

/** The defect an effect died with (it must die: a strict mis-script is no failure a program could handle). */
const defectOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.exit(effect), (exit) => {
    assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause) && !Cause.hasFails(exit.cause))
    return Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
  })

describe("TestRuntime strict mode", () => {
  it.effect("an action with no queued step left is a defect naming the step and the action", () =>
    Effect.gen(function*() {
      const control = yield* TestRuntime
      const rt = yield* Runtime
      const first = yield* defectOf(rt.read("/workspace/a.txt"))
      assert.instanceOf(first, UnscriptedActionError)
      assert.strictEqual(
        first.message,
        "TestRuntime (strict) step 1: got an unscripted \"read\" action (\"/workspace/a.txt\"), but no step was queued: enqueue an answer for it or pass `respond`."
      )
      // It took no step: the first one queued answers the next action.
      yield* control.enqueue(built("make"))
      assert.strictEqual((yield* rt.runCommand("make")).content, "built")
      const defect = yield* defectOf(rt.runCommand("rm -rf build"))
      assert.instanceOf(defect, UnscriptedActionError)
      assert.deepStrictEqual([defect.step, defect.action], [2, "run"])
      assert.strictEqual(
        defect.message,
        "TestRuntime (strict) step 2: got an unscripted \"run\" action (\"rm -rf build\"), but only 1 step was queued: enqueue an answer for it or pass `respond`."
      )
      assert.strictEqual((yield* control.actions).length, 3)
    }).pipe(Effect.provide(TestRuntime.layer({ strict: true }))))

  it.effect("a queued observation that cannot answer the action is a defect naming the step, expected and actual", () =>
    Effect.gen(function*() {
      const control = yield* TestRuntime
      const rt = yield* Runtime
      yield* control.enqueue(built("make"), new FileReadObservation({ content: "x", path: "/workspace/a.txt" }))
      assert.strictEqual((yield* rt.runCommand("make")).content, "built")
      const defect = yield* defectOf(rt.runCommand("make test"))
      assert.instanceOf(defect, MisscriptedStepError)
      assert.deepStrictEqual(
        [defect.step, defect.observation, defect.expected, defect.action],
        [2, "FileReadObservation", "\"read\"", "run"]
      )
      assert.strictEqual(
        defect.message,
        "TestRuntime (strict) step 2: the queued FileReadObservation answers a \"read\" action, but the code sent a \"run\" action (\"make test\")."
      )
    }).pipe(Effect.provide(TestRuntime.layer({ strict: true }))))

  it.effect("the check holds for run and runStream too, and for scripted chunks", () =>
    Effect.gen(function*() {
      const control = yield* TestRuntime
      const rt = yield* Runtime
      const page = new BrowserOutputObservation({ content: "page", url: "https://a.test", triggerByAction: "browse" })
      yield* control.enqueue(new StreamedStep(["1\n"], page), page)
      const streamed = yield* defectOf(Stream.runCollect(rt.runStream(new CmdRunAction({ command: "seq 1" }))))
      assert.instanceOf(streamed, MisscriptedStepError)
      assert.strictEqual(
        streamed.message,
        "TestRuntime (strict) step 1: the queued BrowserOutputObservation answers a \"browse\" or \"browse_interactive\" action, but the code sent a \"run\" action (\"seq 1\")."
      )
      const ran = yield* defectOf(rt.run(new McpCallAction({ name: "search", arguments: {} })))
      assert.instanceOf(ran, MisscriptedStepError)
      assert.strictEqual(ran.step, 2)
      assert.strictEqual(ran.action, "call_tool_mcp")
    }).pipe(Effect.provide(TestRuntime.layer({ strict: true }))))

  it.effect("an ErrorObservation answers any action; a tool that is off takes no step", () =>
    Effect.gen(function*() {
      const control = yield* TestRuntime
      const rt = yield* Runtime
      yield* control.enqueue(new ErrorObservation({ content: "no such file" }), built("make"))
      assert.strictEqual((yield* rt.read("/workspace/missing")).content, "no such file")
      const off = yield* rt.runIPython("1 + 1")
      assert.strictEqual(off.content, "JupyterRequirement not found. Unable to run IPython action.")
      assert.strictEqual((yield* rt.runCommand("make")).content, "built")
    }).pipe(Effect.provide(TestRuntime.layer({ strict: true, capabilities: { ipython: false } }))))

  it.effect("respond answers in strict mode", () =>
    Effect.gen(function*() {
      const rt = yield* Runtime
      assert.strictEqual((yield* rt.runCommand("make")).content, "built")
    }).pipe(Effect.provide(TestRuntime.layer({ strict: true, respond: () => built("make") }))))

  it.effect("without strict, a mis-scripted step is answered as queued (a shortcut then says so: shortcuts.test.ts)", () =>
    Effect.gen(function*() {
      const control = yield* TestRuntime
      const rt = yield* Runtime
      const read = new FileReadObservation({ content: "x", path: "/workspace/a.txt" })
      yield* control.enqueue(read)
      assert.strictEqual(yield* rt.run(new CmdRunAction({ command: "make" })), read)
    }).pipe(Effect.provide(TestRuntime.layer())))
})

describe("TestRuntime background processes", () => {
  it.effect("answers spawn with the scripted output and exit, and records stdin, signals and release", () =>
    Effect.gen(function*() {
      const layer = TestRuntime.layer({
        processes: (spec) =>
          spec.command === "serve"
            ? { pid: 42, output: [{ stream: "stdout", text: "listening\n" }], exit: { exitCode: 0, signal: null } }
            : undefined
      })
      yield* Effect.gen(function*() {
        const rt = yield* Runtime
        const control = yield* TestRuntime
        const handle = yield* rt.spawn("serve", { cwd: "app", env: { PORT: "80" }, stdin: "hello\n" })
        assert.strictEqual(handle.pid, 42)
        assert.deepStrictEqual(yield* Stream.runCollect(handle.output), [{ stream: "stdout", text: "listening\n" }])
        yield* handle.signal("SIGTERM")
        assert.deepStrictEqual(yield* handle.wait, { exitCode: 0, signal: null })
        const closed = yield* Effect.flip(handle.write("more\n"))
        assert.instanceOf(closed, ProcessError)
        const other = yield* rt.spawn("sleep 1")
        yield* other.signal("SIGKILL")
        assert.deepStrictEqual(yield* other.wait, { exitCode: null, signal: "SIGKILL" })
        assert.deepStrictEqual((yield* control.processes).map((p) => [p.spec, p.stdin, p.stdinClosed, p.signals]), [
          [{ command: "serve", cwd: "app", env: { PORT: "80" }, secrets: [] }, "hello\n", true, ["SIGTERM"]],
          [{ command: "sleep 1" }, "", false, ["SIGKILL"]]
        ])
        assert.isFalse((yield* control.processes)[0]!.released)
      }).pipe(Effect.scoped, Effect.provide(layer))
    }))

  it.effect("closing the scope releases the process; its handle then fails with ProcessNotFoundError", () =>
    Effect.gen(function*() {
      const rt = yield* Runtime
      const control = yield* TestRuntime
      const handle = yield* Effect.scoped(rt.spawn("job"))
      assert.isTrue((yield* control.processes)[0]!.released)
      assert.instanceOf(yield* Effect.flip(handle.wait), ProcessNotFoundError)
    }).pipe(Effect.provide(TestRuntime.layer())))

  it.effect("strict: an unscripted spawn is a defect naming the command", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(
        Effect.scoped(Runtime.use((rt) => rt.spawn("rogue --daemon"))).pipe(
          Effect.provide(TestRuntime.layer({ strict: true }))
        )
      )
      assert.isTrue(Exit.isFailure(exit))
      const defect = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
      assert.instanceOf(defect, UnscriptedProcessError)
      assert.strictEqual(
        (defect as UnscriptedProcessError).message,
        "TestRuntime (strict) got an unscripted spawn of \"rogue --daemon\": answer it with the `processes` option."
      )
    }))
})
