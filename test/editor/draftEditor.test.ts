/**
 * The LLM-based draft editor (spec §8.4) on CliRuntime with a scripted `LanguageModel`: each rule
 * (create, range checks, append without a model, the 300-line limit and its snippets, three tries,
 * lint and correction rounds) with OpenHands' exact texts, the files on disk and the prompts sent.
 * Files written through the runtime end with a newline (its FileWrite, as OpenHands' server).
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Redacted, Scope, Stream } from "effect"
import { AiError, LanguageModel, type Prompt } from "effect/ai"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { draftUserMessage } from "../../src/editor/prompts.ts"
import { MISSING_TOOL_TEXT } from "../../src/executor/ActionExecutor.ts"
import { unifiedDiff } from "../../src/executor/editor/diff.ts"
import {
  CliRuntime,
  DraftEditorSettings,
  type DraftEditorSettingsShape,
  ErrorObservation,
  FileEditAction,
  FileEditObservation,
  Runtime
} from "../../src/index.ts"
import { LocalRuntime } from "../../src/local.ts"
import { MASK } from "../../src/schema/secrets.ts"
import { tempDir } from "../workspace/repos.ts"

/** One scripted answer: text, a single `edit_file` tool call, or a provider failure. */
type Answer = { readonly text: string } | { readonly editFile: Record<string, unknown> } | "fail"

/** A LanguageModel answering from `answers` in order and recording every prompt it was sent. */
const scriptedModel = (answers: Array<Answer>, prompts: Array<Prompt.Prompt>) =>
  Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: (options) =>
        Effect.suspend(() => {
          prompts.push(options.prompt)
          const next = answers.shift()
          if (next === undefined) return Effect.die("the scripted model has no answer left")
          if (next === "fail") {
            return Effect.fail(
              AiError.make({ module: "test", method: "generateText", reason: new AiError.UnknownError({}) })
            )
          }
          return Effect.succeed(
            "text" in next
              ? [{ type: "text" as const, text: next.text }]
              : [{ type: "tool-call" as const, id: "call-1", name: "edit_file", params: next.editFile }]
          )
        }),
      streamText: () => Stream.die("streamText is not used by the draft editor")
    })
  )

/** The text of each message of a prompt, as `role: text`. */
const messages = (prompt: Prompt.Prompt) =>
  prompt.content.map((m) =>
    `${m.role}: ${typeof m.content === "string" ? m.content : m.content.map((p) => "text" in p ? p.text : "").join("")}`
  )

const withEditor = <A, E>(
  answers: Array<Answer>,
  f: (workspace: string, prompts: Array<Prompt.Prompt>) => Effect.Effect<A, E, Runtime | Scope.Scope>,
  settings: DraftEditorSettingsShape = {}
) =>
  Effect.gen(function*() {
    const workspace = yield* tempDir("oh-draft-")
    const prompts: Array<Prompt.Prompt> = []
    const runtime = CliRuntime.layer({ workspace }).pipe(
      Layer.provide(scriptedModel(answers, prompts)),
      Layer.provide(Layer.succeed(DraftEditorSettings, settings))
    )
    return yield* f(workspace, prompts).pipe(Effect.provide(runtime))
  }).pipe(Effect.scoped)

const draft = (path: string, content: string, start = 1, end = -1) =>
  Runtime.use((rt) => rt.run(new FileEditAction({ path, content, start, end, implSource: "llm_based_edit" })))

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n")

describe("draft editor (llm_based_edit)", () => {
  it.live("without a LanguageModel the executor's clear error stays", () =>
    Effect.gen(function*() {
      const workspace = yield* tempDir("oh-draft-")
      const obs = yield* draft("a.txt", "x").pipe(Effect.provide(CliRuntime.layer({ workspace })))
      assert.deepStrictEqual(obs, new ErrorObservation({ content: MISSING_TOOL_TEXT.llmEdit }))
    }).pipe(Effect.scoped))

  it.live("a missing file is created from the stripped draft, without the model", () =>
    withEditor([], (workspace, prompts) =>
      Effect.gen(function*() {
        const obs = yield* draft("new/a.py", "\n\nprint(1)\n\n")
        assert.deepStrictEqual(
          obs,
          new FileEditObservation({
            content: unifiedDiff("", "\n\nprint(1)\n\n", "new/a.py"),
            path: "new/a.py",
            prevExist: false,
            oldContent: "",
            newContent: "\n\nprint(1)\n\n"
          })
        )
        assert.strictEqual(readFileSync(join(workspace, "new", "a.py"), "utf8"), "print(1)\n")
        assert.lengthOf(prompts, 0)
      })))

  it.live("range checks answer with OpenHands' texts and change nothing", () =>
    withEditor([], (workspace) =>
      Effect.gen(function*() {
        writeFileSync(join(workspace, "f.txt"), "a\nb\nc")
        const start = (yield* draft("f.txt", "x", 0, 2)) as ErrorObservation
        assert.strictEqual(
          start.content,
          "Invalid range for editing: start=0, end=2, total lines=3. start must be >= 1 and <=3 (total lines of the edited file), start <= end, or start == -1 (append to the end of the file)."
        )
        const end = (yield* draft("f.txt", "x", 2, 4)) as ErrorObservation
        assert.strictEqual(
          end.content,
          "Invalid range for editing: start=2, end=4, total lines=3. end must be >= 1 and <= 3 (total lines of the edited file), end >= start, or end == -1 (to edit till the end of the file)."
        )
        const reversed = (yield* draft("f.txt", "x", 3, 2)) as ErrorObservation
        assert.match(reversed.content, /^Invalid range for editing: start=3, end=2, total lines=3\. start must be/)
        assert.strictEqual(readFileSync(join(workspace, "f.txt"), "utf8"), "a\nb\nc")
      })))

  it.live("start -1 appends the draft's lines without the model", () =>
    withEditor([], (workspace, prompts) =>
      Effect.gen(function*() {
        writeFileSync(join(workspace, "f.txt"), "a\nb")
        const obs = yield* draft("f.txt", "c\nd", -1)
        assert.instanceOf(obs, FileEditObservation)
        assert.strictEqual(obs.content, unifiedDiff("a\nb", "a\nb\nc\nd", "f.txt"))
        assert.strictEqual(obs.oldContent, "a\nb")
        assert.strictEqual(obs.newContent, "a\nb\nc\nd")
        assert.isTrue(obs.prevExist)
        assert.strictEqual(readFileSync(join(workspace, "f.txt"), "utf8"), "a\nb\nc\nd\n")
        assert.lengthOf(prompts, 0)
      })))

  it.live("a range over 301 lines is refused with the most similar 20-line snippets", () =>
    withEditor([{ text: "<updated_code>X</updated_code>" }], (workspace, prompts) =>
      Effect.gen(function*() {
        writeFileSync(join(workspace, "big.txt"), numbered(400))
        const snippet = numbered(60).split("\n").slice(40).join("\n")
        const obs = (yield* draft("big.txt", snippet, 1, 302)) as ErrorObservation
        const lines41to60 = snippet.split("\n").map((l, i) => `${41 + i}|${l}\n`).join("")
        assert.isTrue(
          obs.content.startsWith(
            "[Edit error: The range of lines to edit is too long.]\n" +
              "[The maximum number of lines allowed to edit at once is 300. Got (L1-L302) 302 lines.]\n" +
              "Here are some snippets that maybe relevant to the provided edit.\n" +
              "[begin relevant snippet 1. Line range: L41-L60. Similarity: 1.0]\n" +
              "[Browse around it via `open_file(\"big.txt\", 50)`]\n" +
              `${lines41to60}\n[end relevant snippet 1]\n${"-".repeat(40)}\n` +
              "[begin relevant snippet 2. Line range: L"
          ),
          obs.content
        )
        assert.strictEqual(obs.content.match(/\[begin relevant snippet \d/g)?.length, 3)
        assert.isTrue(
          obs.content.endsWith(
            "Consider using `open_file` to explore around the relevant snippets if needed.\n" +
              "**IMPORTANT**: Please REDUCE the range of edits to less than 300 lines by setting `start` and `end` in the edit action (e.g. `<file_edit path=\"big.txt\" start=[PUT LINE NUMBER HERE] end=[PUT LINE NUMBER HERE] />`). "
          )
        )
        assert.lengthOf(prompts, 0)
        // 301 lines is still allowed (OpenHands' `> MAX_LINES_TO_EDIT + 1`): it goes to the model.
        const edited = yield* draft("big.txt", "X", 100, 400)
        assert.instanceOf(edited, FileEditObservation)
        assert.lengthOf(prompts, 1)
        assert.strictEqual(readFileSync(join(workspace, "big.txt"), "utf8"), `${numbered(99)}\nX\n`)
      })))

  it.live("the model merges the draft into the range (an #EDIT: line dropped); the prompt is OpenHands'", () =>
    withEditor(
      [{ text: "Sure.\n<updated_code>#EDIT: replace b\nB1\nB2</updated_code> done" }],
      (workspace, prompts) =>
        Effect.gen(function*() {
          writeFileSync(join(workspace, "f.txt"), "a\nb\nc")
          const obs = yield* draft("f.txt", "B1\nB2", 2, 2)
          assert.deepStrictEqual(
            obs,
            new FileEditObservation({
              content: unifiedDiff("a\nb\nc", "a\nB1\nB2\nc", "f.txt"),
              path: "f.txt",
              prevExist: true,
              oldContent: "a\nb\nc",
              newContent: "a\nB1\nB2\nc"
            })
          )
          assert.strictEqual(readFileSync(join(workspace, "f.txt"), "utf8"), "a\nB1\nB2\nc\n")
          assert.lengthOf(prompts, 1)
          assert.deepStrictEqual(messages(prompts[0]!), [`user: ${draftUserMessage("b", "B1\nB2")}`])
          assert.include(
            draftUserMessage("b", "B1\nB2"),
            "<original_code>b</original_code>\n\n<update_snippet>B1\nB2</update_snippet>"
          )
        })
    ))

  it.live("up to 3 tries: answers without <updated_code> or failures are retried, then the exact error", () =>
    Effect.gen(function*() {
      yield* withEditor(
        [{ text: "no tags" }, "fail", { text: "<updated_code>X</updated_code>" }],
        (workspace, prompts) =>
          Effect.gen(function*() {
            writeFileSync(join(workspace, "f.txt"), "a\nb")
            assert.instanceOf(yield* draft("f.txt", "X", 1, 1), FileEditObservation)
            assert.strictEqual(readFileSync(join(workspace, "f.txt"), "utf8"), "X\nb\n")
            assert.lengthOf(prompts, 3)
          })
      )
      yield* withEditor(
        [{ text: "a" }, { text: "b" }, { text: "c" }, { text: "<updated_code>late</updated_code>" }],
        (workspace, prompts) =>
          Effect.gen(function*() {
            writeFileSync(join(workspace, "f.txt"), "a\nb")
            const obs = yield* draft("f.txt", "X", 1, 1)
            assert.deepStrictEqual(
              obs,
              new ErrorObservation({
                content: "Failed to get new file contents. Please try to reduce the number of edits and try again."
              })
            )
            assert.strictEqual(readFileSync(join(workspace, "f.txt"), "utf8"), "a\nb")
            assert.lengthOf(prompts, 3)
          })
      )
    }))

  it.live("lint errors: the edit is written and the error shows the attempt; no correction by default", () =>
    withEditor(
      [{ text: "<updated_code>x = (</updated_code>" }],
      (workspace) =>
        Effect.gen(function*() {
          writeFileSync(join(workspace, "m.py"), "x = 1")
          const obs = (yield* draft("m.py", "x = (", 1, 1)) as ErrorObservation
          assert.strictEqual(
            obs.content,
            "\n[Linting failed for edited file m.py. 1 lint errors found.]\n[begin attempted changes]\n" +
              `${unifiedDiff("x = 1", "x = (", "m.py")}\n[end attempted changes]\n${"-".repeat(40)}\n` +
              `${"-".repeat(20)}First 5 lint errors${"-".repeat(20)}\n` +
              `[begin lint error 0]\nm.py:1:5: E999 SyntaxError\n[end lint error 0]\n${"-".repeat(40)}\n`
          )
          assert.strictEqual(readFileSync(join(workspace, "m.py"), "utf8"), "x = (\n")
        }),
      { lint: ({ after }) => Effect.succeed(after.includes("(") ? ["  m.py:1:5: E999 SyntaxError\n"] : []) }
    ))

  it.live("a correction round: the model answers the lint errors with an edit_file call, which is applied", () =>
    withEditor(
      [
        { text: "<updated_code>x = (</updated_code>" },
        { editFile: { path: "m.py", content: "x = 2", start: 1, end: 1 } },
        { text: "<updated_code>x = 2</updated_code>" }
      ],
      (workspace, prompts) =>
        Effect.gen(function*() {
          writeFileSync(join(workspace, "m.py"), "x = 1")
          const obs = yield* draft("m.py", "x = (", 1, 1)
          assert.instanceOf(obs, FileEditObservation)
          assert.strictEqual(obs.oldContent, "x = (\n")
          assert.strictEqual(obs.newContent, "x = 2\n")
          // Each FileWrite ends the file with a newline (as OpenHands' server does), so a second pass adds one.
          assert.strictEqual(readFileSync(join(workspace, "m.py"), "utf8"), "x = 2\n\n")
          assert.lengthOf(prompts, 3)
          const correction = messages(prompts[1]!)
          assert.match(correction[0]!, /^system: You are a code repair assistant\./)
          assert.match(
            correction[1]!,
            /^user: THE FOLLOWING ARE THE ORIGINAL FILE CONTENTS AND THE ERROR INFORMATION REPORTED BY THE LINT TOOL\n\n# CURRENT FILE CONTENT:\n```\nx = \(\n```\n\n# ERROR MESSAGE FROM STATIC CODE CHECKING TOOL:\n```\n\n\[Linting failed for edited file m\.py\. 1 lint errors found\.\]/
          )
        }),
      { correctionRounds: 1, lint: ({ after }) => Effect.succeed(after.includes("(") ? ["syntax error"] : []) }
    ))
})

describe("draft editor and the runtime's guarantees", () => {
  it.live("a secret the model echoes is masked in the observation (the runtime's masking covers the editor)", () =>
    withEditor([{ text: "<updated_code>key = tok-5e5e5e5e5e</updated_code>" }], (workspace) =>
      Effect.gen(function*() {
        const rt = yield* Runtime
        yield* rt.addEnvVars({ API_KEY: Redacted.make("tok-5e5e5e5e5e") })
        writeFileSync(join(workspace, "c.txt"), "key = ?")
        const obs = yield* draft("c.txt", "key = $API_KEY", 1, 1)
        assert.instanceOf(obs, FileEditObservation)
        assert.strictEqual(obs.newContent, `key = ${MASK}`)
        assert.notInclude(JSON.stringify(obs), "tok-5e5e5e5e5e")
      })))

  it.live("a released runtime refuses a draft edit like any action", () =>
    Effect.gen(function*() {
      const workspace = yield* tempDir("oh-draft-")
      const scope = yield* Scope.make()
      const layer = CliRuntime.layer({ workspace }).pipe(Layer.provide(scriptedModel([], [])))
      const rt = Context.get(yield* Layer.buildWithScope(layer, scope), Runtime)
      yield* Scope.close(scope, Exit.void)
      const error = yield* Effect.flip(
        rt.run(new FileEditAction({ path: "a.txt", content: "x", implSource: "llm_based_edit" }))
      )
      assert.strictEqual(error._tag, "RuntimeDisconnectedError")
    }).pipe(Effect.scoped))
})

describe("draft editor over HTTP", () => {
  it.live(
    "LocalRuntime: the model runs on the agent side, reads and writes go to the action server",
    () =>
      Effect.gen(function*() {
        const root = yield* tempDir("oh-draft-local-")
        const workspace = join(root, "ws")
        mkdirSync(workspace)
        writeFileSync(join(workspace, "f.txt"), "a\nb\nc")
        const prompts: Array<Prompt.Prompt> = []
        const obs = yield* draft(join(workspace, "f.txt"), "B", 2, 2).pipe(
          Effect.provide(
            LocalRuntime.layer({ workspace }).pipe(
              Layer.provide(scriptedModel([{ text: "<updated_code>B</updated_code>" }], prompts))
            )
          )
        )
        assert.instanceOf(obs, FileEditObservation)
        assert.strictEqual(obs.newContent, "a\nB\nc")
        // The action server's FileWrite ends the file with a newline (OpenHands' server does too).
        assert.strictEqual(readFileSync(join(workspace, "f.txt"), "utf8"), "a\nB\nc\n")
        assert.lengthOf(prompts, 1)
      }).pipe(Effect.scoped),
    60_000
  )
})
