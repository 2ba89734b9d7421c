/**
 * The agent_skills helpers (spec §2.7) in a real kernel, driven through CliRuntime:
 * exact texts of open_file / goto_line / scroll_*, the search helpers, and
 * file_editor's `<oh_aci_output_<hex>>` envelope around our OHEditor's results.
 * The cases of the shared block run in order on one kernel (the open file is
 * module state): the "no file open" case must stay first.
 */
import { assert, describe, it as standalone, layer } from "@effect/vitest"
import { Effect } from "effect"
import { join } from "node:path"
import { DEFAULT_PYTHON, scopedStateDir } from "../../src/executor/ActionExecutor.ts"
import { EnvStore } from "../../src/executor/env.ts"
import { makeIPython } from "../../src/executor/jupyter/IPython.ts"
import { agentSkillsKernel } from "../../src/executor/skills/agentSkills.ts"
import {
  CliRuntime,
  FileEditAction,
  IPythonRunCellAction,
  IPythonRunCellObservation,
  Runtime,
  type RuntimeShape
} from "../../src/index.ts"
import { kernelAvailable } from "../conformance/kernel.ts"

/** A cell's output (without the cwd/interpreter lines). */
const cell = (rt: RuntimeShape, code: string) =>
  rt.runIPython(new IPythonRunCellAction({ code, includeExtra: false })).pipe(
    Effect.map((o) => {
      assert.instanceOf(o, IPythonRunCellObservation, o.content)
      return o.content
    })
  )

/** Lines `from..to` of big.txt as the window shows them. */
const numbered = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `${from + i}|line ${from + i}`).join("\n")

const ENVELOPE = /^<oh_aci_output_([0-9a-f]{32})>\n(.*)\n<\/oh_aci_output_\1>$/s

/** The JSON inside file_editor's envelope (which must be the whole output). */
const envelope = (text: string): Record<string, unknown> => {
  const match = ENVELOPE.exec(text)
  assert.isNotNull(match, text)
  return JSON.parse(match![2]!) as Record<string, unknown>
}

const SUCCESS_KEYS = [
  "output",
  "error",
  "path",
  "prev_exist",
  "old_content",
  "new_content",
  "formatted_output_and_error"
]

describe.runIf(kernelAvailable())("agent_skills", () => {
  layer(CliRuntime.layer({ ipython: true }), { excludeTestServices: true })("helpers in the kernel", (it) => {
    it.effect("without an open file, goto_line, scroll_* and search_file say so", () =>
      Effect.gen(function*() {
        const rt = yield* Runtime
        assert.strictEqual(yield* cell(rt, "goto_line(1)"), "ERROR: No file open. Use the open_file function first.")
        assert.strictEqual(yield* cell(rt, "scroll_down()"), "ERROR: No file open. Use the open_file function first.")
        assert.strictEqual(yield* cell(rt, "scroll_up()"), "ERROR: No file open. Use the open_file function first.")
        assert.strictEqual(
          yield* cell(rt, "search_file('x')"),
          "ERROR: No file specified or open. Use the open_file function first."
        )
      }))

    it.effect("open_file, scroll_down, scroll_up and goto_line show 100-line windows", () =>
      Effect.gen(function*() {
        const rt = yield* Runtime
        const ws = rt.info.workspace
        yield* rt.write({ path: `${ws}/big.txt`, content: numbered(1, 250).replace(/^\d+\|/gm, "") })
        const header = `[File: ${ws}/big.txt (250 lines total)]`
        assert.strictEqual(
          yield* cell(rt, "open_file('big.txt')"),
          `${header}\n(this is the beginning of the file)\n${
            numbered(1, 100)
          }\n(150 more lines below)\n[Use \`scroll_down\` to view the next 100 lines of the file!]`
        )
        const middle = `${header}\n(100 more lines above)\n${numbered(101, 201)}\n(49 more lines below)`
        assert.strictEqual(yield* cell(rt, "scroll_down()"), middle)
        assert.strictEqual(
          yield* cell(rt, "scroll_down()"),
          `${header}\n(150 more lines above)\n${numbered(151, 250)}\n(this is the end of the file)`
        )
        assert.strictEqual(yield* cell(rt, "scroll_up()"), middle)
        assert.strictEqual(
          yield* cell(rt, "goto_line(150)"),
          `${header}\n(99 more lines above)\n${numbered(100, 200)}\n(50 more lines below)`
        )
        assert.strictEqual(yield* cell(rt, "goto_line(251)"), "ERROR: Line number must be between 1 and 250.")
        assert.strictEqual(
          yield* cell(rt, "open_file('big.txt', 240, 10)"),
          `${header}\n(234 more lines above)\n${
            numbered(235, 245)
          }\n(5 more lines below)\n[Use \`scroll_down\` to view the next 100 lines of the file!]`
        )
        assert.strictEqual(yield* cell(rt, "open_file('big.txt', 0)"), "ERROR: Line number must be between 1 and 250")
        assert.strictEqual(yield* cell(rt, "open_file('missing.txt')"), "ERROR: File missing.txt not found.")
        // search_file defaults to the open file.
        assert.strictEqual(
          yield* cell(rt, "search_file('line 25')"),
          `[Found 2 matches for "line 25" in ${ws}/big.txt]\nLine 25: line 25\nLine 250: line 250\n[End of matches for "line 25" in ${ws}/big.txt]`
        )
      }))

    it.effect("an empty file shows one empty line", () =>
      Effect.gen(function*() {
        const rt = yield* Runtime
        yield* rt.write({ path: `${rt.info.workspace}/empty.txt`, content: "" })
        assert.strictEqual(
          yield* cell(rt, "open_file('empty.txt')"),
          `[File: ${rt.info.workspace}/empty.txt (1 lines total)]\n(this is the beginning of the file)\n1|\n(this is the end of the file)`
        )
      }))

    it.effect("search_dir, search_file and find_file list matches in OpenHands' words", () =>
      Effect.gen(function*() {
        const rt = yield* Runtime
        const ws = rt.info.workspace
        // One file a directory: os.walk lists a directory's files in no fixed order.
        yield* rt.write({ path: `${ws}/s/a.py`, content: "def foo():\n    return 1\n" })
        yield* rt.write({ path: `${ws}/s/sub/b.py`, content: "foo()\n" })
        yield* rt.write({ path: `${ws}/s/sub/.c/.hidden`, content: "foo\n" })
        assert.strictEqual(
          yield* cell(rt, "search_dir('foo', 's')"),
          "[Found 2 matches for \"foo\" in s]\ns/a.py (Line 1): def foo():\ns/sub/b.py (Line 1): foo()\n[End of matches for \"foo\" in s]"
        )
        assert.strictEqual(yield* cell(rt, "search_dir('nothing', 's')"), "No matches found for \"nothing\" in s")
        assert.strictEqual(yield* cell(rt, "search_dir('foo', 'nope')"), "ERROR: Directory nope not found")
        assert.strictEqual(
          yield* cell(rt, "search_file('return', 's/a.py')"),
          "[Found 1 matches for \"return\" in s/a.py]\nLine 2: return 1\n[End of matches for \"return\" in s/a.py]"
        )
        assert.strictEqual(yield* cell(rt, "search_file('zzz', 's/a.py')"), "[No matches found for \"zzz\" in s/a.py]")
        assert.strictEqual(yield* cell(rt, "search_file('x', 's/none.py')"), "ERROR: File s/none.py not found.")
        assert.strictEqual(
          yield* cell(rt, "find_file('b.py', 's')"),
          "[Found 1 matches for \"b.py\" in s]\ns/sub/b.py\n[End of matches for \"b.py\" in s]"
        )
        // find_file, unlike search_dir, does not skip hidden files.
        assert.strictEqual(
          yield* cell(rt, "find_file('hidden', 's')"),
          "[Found 1 matches for \"hidden\" in s]\ns/sub/.c/.hidden\n[End of matches for \"hidden\" in s]"
        )
        assert.strictEqual(yield* cell(rt, "find_file('zzz', 's')"), "[No matches found for \"zzz\" in s]")
        assert.strictEqual(yield* cell(rt, "find_file('a', 'nope')"), "ERROR: Directory nope not found")
      }))

    it.effect("file_editor runs OHEditor: create, view, str_replace and undo_edit across calls", () =>
      Effect.gen(function*() {
        const rt = yield* Runtime
        const p = `${rt.info.workspace}/e.txt`
        const created = envelope(yield* cell(rt, `print(file_editor('create', '${p}', file_text='one\\ntwo\\n'))`))
        assert.deepStrictEqual(Object.keys(created), SUCCESS_KEYS)
        assert.deepStrictEqual(created, {
          output: `File created successfully at: ${p}`,
          error: null,
          path: p,
          prev_exist: false,
          old_content: null,
          new_content: "one\ntwo\n",
          formatted_output_and_error: `File created successfully at: ${p}`
        })
        // A bare call shows the envelope itself, not a quoted repr.
        const viewed = envelope(yield* cell(rt, `file_editor(command='view', path='${p}')`))
        const listing = `Here's the result of running \`cat -n\` on ${p}:\n     1\tone\n     2\ttwo\n     3\t\n`
        assert.deepStrictEqual(viewed, {
          output: listing,
          error: null,
          path: p,
          prev_exist: true,
          old_content: null,
          new_content: null,
          formatted_output_and_error: listing
        })
        const replaced = envelope(
          yield* cell(rt, `print(file_editor('str_replace', '${p}', old_str='two', new_str='2'))`)
        )
        assert.strictEqual(
          replaced["formatted_output_and_error"],
          `The file ${p} has been edited. Here's the result of running \`cat -n\` on a snippet of ${p}:\n     1\tone\n     2\t2\n     3\t\nReview the changes and make sure they are as expected. Edit the file again if necessary.`
        )
        assert.strictEqual(replaced["old_content"], "one\ntwo\n")
        assert.strictEqual(replaced["new_content"], "one\n2\n")
        // Its history is its own: the runtime's editor has none for this file.
        const serverUndo = yield* rt.edit(new FileEditAction({ path: p, command: "undo_edit" }))
        assert.strictEqual(serverUndo.content, `ERROR:\nNo edit history found for ${p}.`)
        const undone = envelope(yield* cell(rt, `print(file_editor('undo_edit', '${p}'))`))
        assert.strictEqual(
          undone["formatted_output_and_error"],
          `Last edit to ${p} undone successfully. ${listing}`
        )
        assert.strictEqual(undone["old_content"], "one\n2\n")
        assert.strictEqual(undone["new_content"], "one\ntwo\n")
        // create recorded its text (OHEditor's quirk), so one more undo rewrites it; then none is left.
        envelope(yield* cell(rt, `print(file_editor('undo_edit', '${p}'))`))
        const none = envelope(yield* cell(rt, `print(file_editor('undo_edit', '${p}'))`))
        assert.deepStrictEqual(none, {
          output: null,
          error: `No edit history found for ${p}.`,
          formatted_output_and_error: `ERROR:\nNo edit history found for ${p}.`
        })
        const relative = envelope(yield* cell(rt, "print(file_editor('view', 'e.txt'))"))
        assert.strictEqual(
          relative["formatted_output_and_error"],
          `ERROR:\nInvalid \`path\` parameter: e.txt. The path should be an absolute path, starting with \`/\`. Maybe you meant ${p}?`
        )
      }))

    it.effect("the editor's settings reach the kernel only, and a restarted kernel has the helpers again", () =>
      Effect.gen(function*() {
        const rt = yield* Runtime
        const shell = yield* rt.runCommand("echo \"[$EFFECT_SANDBOX_EDITOR_ENTRY]\"")
        assert.strictEqual(shell.content, "[]")
        yield* cell(rt, "import os; os._exit(1)")
        assert.strictEqual(
          yield* cell(rt, "find_file('b.py', 's')"),
          "[The IPython kernel died and was restarted: its variables and imports are lost.]\n[Found 1 matches for \"b.py\" in s]\ns/sub/b.py\n[End of matches for \"b.py\" in s]"
        )
      }))
  })

  standalone.live(
    "start-up code that raises fails the kernel's start with its traceback",
    () =>
      Effect.gen(function*() {
        const dir = yield* scopedStateDir
        const ipython = yield* makeIPython({
          python: DEFAULT_PYTHON,
          stateDir: dir,
          cwd: () => dir,
          env: new EnvStore(join(dir, "env.sh")),
          baseEnv: process.env as Record<string, string>,
          marker: "agent-skills-test",
          initCode: "raise ValueError('no skills')"
        })
        const error = yield* Effect.flip(ipython.run(new IPythonRunCellAction({ code: "1" })))
        assert.match(
          error.message,
          /^Cannot start the IPython kernel: its start-up code failed: -+\nValueError +Traceback.*\nValueError: no skills$/s
        )
      }).pipe(Effect.scoped)
  )

  layer(CliRuntime.layer({ ipython: { agentSkills: false } }), { excludeTestServices: true })("opted out", (it) => {
    it.effect("ipython with agentSkills: false has no helpers", () =>
      Effect.gen(function*() {
        const rt = yield* Runtime
        const out = yield* cell(rt, "open_file")
        assert.isTrue(out.endsWith("NameError: name 'open_file' is not defined"), out)
      }))
  })
})

describe("agent_skills without its files", () => {
  standalone.effect(
    "a missing skills package says what an installed user can do, not a repository script alone",
    () =>
      Effect.gen(function*() {
        const here = "/nonexistent/effect-sandbox/dist/src/executor/skills/agentSkills.js"
        const error = yield* agentSkillsKernel("/nonexistent/state", {}, here).pipe(Effect.flip)
        assert.strictEqual(
          error.message,
          `Cannot enable agent_skills: the Python package effect_sandbox_skills was not found beside ${here} or in ` +
            "the payload: reinstall effect-sandbox (its package ships the payload), or in a checkout run npm run build:payload."
        )
      })
  )
})
