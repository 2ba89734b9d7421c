/** IPython cells (spec §2.6, §2.7) for runtimes with the jupyter plugin. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { IPythonRunCellAction, IPythonRunCellObservation, type RuntimeShape } from "../../src/index.ts"
import { withRuntime } from "./helpers.ts"
import { type ConformanceTarget, toolTitle } from "./target.ts"

const PNG_1x1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

const cell = (
  rt: RuntimeShape,
  code: string,
  fields: Partial<ConstructorParameters<typeof IPythonRunCellAction>[0]> = {}
) =>
  rt.runIPython(new IPythonRunCellAction({ code, includeExtra: false, ...fields })).pipe(
    Effect.map((o) => {
      assert.instanceOf(o, IPythonRunCellObservation, o.content)
      return o as IPythonRunCellObservation
    })
  )

export const ipythonConformance = (target: ConformanceTarget) =>
  describe(toolTitle(target, "ipython"), () => {
    const live = it.live.skipIf(!target.capabilities.ipython)
    live("prints, keeps state across cells, and shows results", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          assert.strictEqual((yield* cell(rt, "print('hello'); x = 41")).content, "hello")
          assert.strictEqual((yield* cell(rt, "x + 1")).content, "42")
          assert.strictEqual((yield* cell(rt, "y = 1")).content, "[Code executed successfully with no output]")
        })))

    live("adds the working directory and interpreter lines, following the shell's cwd", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          yield* rt.runCommand("mkdir -p sub && cd sub")
          const obs = yield* cell(rt, "import os; print(os.getcwd())", { includeExtra: true })
          const interpreter = (yield* cell(rt, "import sys; print(sys.executable)")).content
          assert.strictEqual(
            obs.content,
            `${rt.info.workspace}/sub\n[Jupyter current working directory: ${rt.info.workspace}/sub]\n[Jupyter Python interpreter: ${interpreter}]`
          )
        })))

    live("returns an exception as its traceback without colour codes", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const obs = yield* cell(rt, "1/0")
          assert.include(obs.content, "ZeroDivisionError")
          assert.isTrue(obs.content.endsWith("ZeroDivisionError: division by zero"), obs.content)
          assert.notInclude(obs.content, "\x1b")
        })))

    live("returns displayed images as data URLs", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const obs = yield* cell(
            rt,
            `from IPython.display import Image, display\nimport base64\ndisplay(Image(data=base64.b64decode("${PNG_1x1}")))`
          )
          assert.deepStrictEqual(obs.imageUrls, [`data:image/png;base64,${PNG_1x1}`])
        })))

    live("interrupts a cell at its timeout and keeps the kernel's state", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          yield* cell(rt, "kept = 'yes'")
          const slow = yield* cell(rt, "import time; time.sleep(30)", { timeout: 1 })
          assert.isTrue(slow.content.endsWith("[Execution timed out (1.0 seconds).]"), slow.content)
          assert.strictEqual((yield* cell(rt, "kept")).content, "'yes'")
        })))

    live("sees environment variables added to the runtime", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          yield* rt.addEnvVars({ FOR_PYTHON: "from env" })
          assert.strictEqual((yield* cell(rt, "import os; os.environ['FOR_PYTHON']")).content, "'from env'")
        })))

    // Every conformance target with IPython also has agent_skills (OpenHands' default agent set).
    live("has the agent_skills helpers, whose file_editor keeps its own undo history", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const path = `${rt.info.workspace}/skills.txt`
          yield* rt.write({ path, content: "alpha\nbeta" }) // written as alpha\nbeta\n
          assert.strictEqual(
            (yield* cell(rt, "open_file('skills.txt')")).content,
            `[File: ${path} (2 lines total)]\n(this is the beginning of the file)\n1|alpha\n2|beta\n(this is the end of the file)`
          )
          const editorText = (code: string) =>
            cell(rt, `import json\nprint(json.loads(${code}.split('\\n')[1])['formatted_output_and_error'])`).pipe(
              Effect.map((o) =>
                o.content
              )
            )
          assert.strictEqual(
            yield* editorText(`file_editor('str_replace', '${path}', old_str='beta', new_str='gamma')`),
            `The file ${path} has been edited. Here's the result of running \`cat -n\` on a snippet of ${path}:\n     1\talpha\n     2\tgamma\n     3\t\nReview the changes and make sure they are as expected. Edit the file again if necessary.`
          )
          assert.strictEqual(
            yield* editorText(`file_editor('undo_edit', '${path}')`),
            `Last edit to ${path} undone successfully. Here's the result of running \`cat -n\` on ${path}:\n     1\talpha\n     2\tbeta\n     3` // the cell's trailing tab and newline are trimmed
          )
          assert.strictEqual(
            yield* editorText(`file_editor('undo_edit', '${path}')`),
            `ERROR:\nNo edit history found for ${path}.`
          )
        })))

    live("restarts a kernel that died and says its state is lost", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          yield* cell(rt, "lost = 1")
          yield* cell(rt, "import os; os._exit(1)")
          const next = yield* cell(rt, "print('fresh')")
          assert.strictEqual(
            next.content,
            "[The IPython kernel died and was restarted: its variables and imports are lost.]\nfresh"
          )
          assert.include((yield* cell(rt, "lost")).content, "NameError")
        })))
  })
