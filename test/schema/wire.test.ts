import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  CmdOutputMetadata,
  CmdOutputObservation,
  CmdRunAction,
  decodeAction,
  decodeObservation,
  encodeAction,
  encodeObservation,
  FileEditAction,
  McpCallAction
} from "../../src/index.ts"
import { TRUNCATION_NOTICE, truncationNotice } from "../../src/schema/cmdOutput.ts"

/** Every [observed] JSON example of spec §1 (from running OpenHands' `event_to_dict`). */
const observedActions: ReadonlyArray<Record<string, unknown>> = [
  {
    message: "Running command: ls -l",
    action: "run",
    args: {
      command: "ls -l",
      is_input: false,
      thought: "",
      blocking: false,
      is_static: false,
      cwd: null,
      hidden: false,
      confirmation_state: "confirmed",
      security_risk: -1
    },
    timeout: 120.0
  },
  {
    message: "Running Python code interactively: print(1)",
    action: "run_ipython",
    args: {
      code: "print(1)",
      thought: "",
      include_extra: true,
      confirmation_state: "confirmed",
      security_risk: -1,
      kernel_init_code: ""
    }
  },
  {
    action: "read",
    args: {
      path: "/workspace/a.txt",
      start: 0,
      end: -1,
      thought: "",
      security_risk: -1,
      impl_source: "default",
      view_range: null
    },
    message: "Reading file: /workspace/a.txt"
  },
  {
    action: "write",
    args: { path: "/workspace/a.txt", content: "hi", start: 0, end: -1, thought: "", security_risk: -1 },
    message: "Writing file: /workspace/a.txt"
  },
  {
    message: "",
    action: "edit",
    args: {
      path: "/workspace/a.txt",
      command: "str_replace",
      file_text: null,
      old_str: "a",
      new_str: "b",
      insert_line: null,
      content: "",
      start: 1,
      end: -1,
      thought: "",
      security_risk: -1,
      impl_source: "oh_aci"
    }
  }
]

const observedObservations: ReadonlyArray<Record<string, unknown>> = [
  {
    message: "Command `echo hi` executed with exit code 0.",
    observation: "run",
    content: "hi",
    extras: {
      command: "echo hi",
      metadata: {
        exit_code: 0,
        pid: -1,
        username: "openhands",
        hostname: "h",
        working_dir: "/workspace",
        py_interpreter_path: "/usr/bin/python",
        prefix: "",
        suffix: "\n[The command completed with exit code 0.]"
      },
      hidden: false
    },
    success: true
  },
  { message: "boom", observation: "error", content: "boom", extras: { error_id: "" } }
]

describe("wire codec", () => {
  for (const json of observedActions) {
    it.effect(`action "${json["action"]}" decodes and re-encodes to the same JSON`, () =>
      Effect.gen(function*() {
        const action = yield* decodeAction(json)
        assert.deepStrictEqual(encodeAction(action), json)
      }))
  }

  for (const json of observedObservations) {
    it.effect(`observation "${json["observation"]}" decodes and re-encodes to the same JSON`, () =>
      Effect.gen(function*() {
        const observation = yield* decodeObservation(json)
        assert.deepStrictEqual(encodeObservation(observation), json)
      }))
  }

  it.effect("decodes the top-level timeout and camelCases args", () =>
    Effect.gen(function*() {
      const action = yield* decodeAction(observedActions[0])
      assert.instanceOf(action, CmdRunAction)
      assert.strictEqual((action as CmdRunAction).timeout, 120)
      assert.strictEqual((action as CmdRunAction).isInput, false)
    }))

  it.effect("fills OpenHands defaults for missing args", () =>
    Effect.gen(function*() {
      const action = yield* decodeAction({ action: "run", args: { command: "pwd" } })
      assert.deepStrictEqual(action, new CmdRunAction({ command: "pwd" }))
    }))

  it.effect("accepts legacy args (is_confirmed, keep_prompt, timestamp)", () =>
    Effect.gen(function*() {
      const action = yield* decodeAction({
        action: "run",
        args: { command: "ls", is_confirmed: "rejected", keep_prompt: true, timestamp: "2025-01-01" }
      })
      assert.strictEqual((action as CmdRunAction).confirmationState, "rejected")
    }))

  it.effect("folds legacy exit_code and command_id into metadata", () =>
    Effect.gen(function*() {
      const obs = yield* decodeObservation({
        observation: "run",
        content: "x",
        extras: { command: "c", exit_code: 3, command_id: 42 }
      })
      assert.instanceOf(obs, CmdOutputObservation)
      assert.strictEqual((obs as CmdOutputObservation).metadata.exitCode, 3)
      assert.strictEqual((obs as CmdOutputObservation).metadata.pid, 42)
    }))

  it.effect("re-applies the 30,000-char truncation on decode (40,000 chars → 30,047)", () =>
    Effect.gen(function*() {
      const obs = yield* decodeObservation({
        observation: "run",
        content: "x".repeat(40_000),
        extras: { command: "c" }
      })
      assert.strictEqual(obs.content.length, 30_047)
      const again = yield* decodeObservation(encodeObservation(obs))
      assert.strictEqual(again.content, obs.content)
    }))

  it.effect("keeps a truncation notice with our note on decode; a longer fake one is cut", () =>
    Effect.gen(function*() {
      const notice = truncationNotice("all 40000 characters are saved in /tmp/s/command-1.log")
      const content = "x".repeat(15_000) + notice + "y".repeat(15_000)
      const obs = yield* decodeObservation({ observation: "run", content, extras: { command: "c" } })
      assert.strictEqual(obs.content, content)
      const fake = "x".repeat(15_000) + truncationNotice("z".repeat(2_000)) + "y".repeat(15_000)
      const cut = yield* decodeObservation({ observation: "run", content: fake, extras: { command: "c" } })
      assert.strictEqual(cut.content, "x".repeat(15_000) + TRUNCATION_NOTICE + "y".repeat(15_000))
    }))

  it.effect("keeps hidden output whole", () =>
    Effect.gen(function*() {
      const obs = yield* decodeObservation({
        observation: "run",
        content: "x".repeat(40_000),
        extras: { command: "c", hidden: true }
      })
      assert.strictEqual(obs.content.length, 40_000)
    }))

  it.effect("leaves MCP argument keys untouched", () =>
    Effect.gen(function*() {
      const action = new McpCallAction({ name: "fetch", arguments: { someKey: 1, other_key: { innerKey: 2 } } })
      const json = encodeAction(action)
      assert.deepStrictEqual((json["args"] as Record<string, unknown>)["arguments"], action.arguments)
      assert.deepStrictEqual(yield* decodeAction(json), action)
    }))

  it.effect("FileEditObservation carries the leaked _diff_cache key", () =>
    Effect.gen(function*() {
      const json = encodeAction(new FileEditAction({ path: "/a", command: "view" }))
      assert.strictEqual(json["action"], "edit")
      const obs = yield* decodeObservation({
        observation: "edit",
        content: "ok",
        extras: {
          path: "/a",
          prev_exist: false,
          old_content: "a",
          new_content: "b",
          impl_source: "oh_aci",
          diff: "--- /a\n+++ /a\n@@ -1 +1 @@\n-a\n+b",
          _diff_cache: null
        }
      })
      assert.deepStrictEqual((encodeObservation(obs)["extras"] as Record<string, unknown>)["_diff_cache"], null)
    }))

  it("computes OpenHands' agent text for command output (spec §3.3)", () => {
    const obs = new CmdOutputObservation({
      content: "hi",
      command: "echo hi",
      metadata: new CmdOutputMetadata({
        exitCode: 0,
        workingDir: "/workspace",
        pyInterpreterPath: "/usr/bin/python",
        suffix: "\n[The command completed with exit code 0.]"
      })
    })
    assert.strictEqual(
      obs.agentText,
      "hi\n[The command completed with exit code 0.]\n[Current working directory: /workspace]\n[Python interpreter: /usr/bin/python]\n[Command finished with exit code 0]"
    )
  })

  describe("bad input gets a clear error", () => {
    const cases: ReadonlyArray<[string, unknown, string]> = [
      ["not an object", 42, "must be a JSON object"],
      ["no type", { args: {} }, "no \"action\" type"],
      ["unknown type", { action: "fly", args: {} }, "Unknown action type \"fly\""],
      ["args not an object", { action: "run", args: [1] }, "\"args\" of action \"run\" must be a JSON object"],
      ["wrong field type", { action: "run", args: { command: 5 } }, "Invalid action \"run\": command: Expected string"],
      ["missing required field", { action: "read", args: {} }, "Invalid action \"read\": path: Missing key"],
      [
        "negative timeout",
        { action: "run", args: { command: "ls" }, timeout: -1 },
        "Invalid action \"run\": timeout: Expected a value greater than 0"
      ],
      [
        "snake_case field names, every bad field on one line",
        { action: "run", args: { command: "ls", is_input: "yes", blocking: 1 } },
        "Invalid action \"run\": is_input: Expected boolean | undefined; blocking: Expected boolean | undefined"
      ]
    ]
    for (const [name, input, expected] of cases) {
      it.effect(name, () =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(decodeAction(input))
          assert.strictEqual(error._tag, "WireDecodeError")
          // Field errors are exact (one line, wire names); the others name the problem.
          if (expected.startsWith("Invalid")) assert.strictEqual(error.message, expected)
          else assert.include(error.message, expected)
        }))
    }
  })
})
