/**
 * OpenHands' LLM-based draft editor (`FileEditRuntimeMixin.llm_based_edit`, spec §8.4): a
 * `FileEditAction` with `implSource: "llm_based_edit"` carries a draft of the new code for a line
 * range; a language model merges it into the file. It runs on the agent's side of the Runtime
 * (reading and writing through `Runtime.run`), so it works on every transport, with any model
 * layer for Effect's `LanguageModel` service.
 */
import { Context, Effect, Option, Schema } from "effect"
import { LanguageModel, Tool, Toolkit } from "effect/ai"
import { unifiedDiff } from "../executor/editor/diff.ts"
import { strip } from "../executor/editor/python.ts"
import { type Action, FileEditAction, FileReadAction, FileWriteAction } from "../schema/Action.ts"
import type { RuntimeError } from "../schema/errors.ts"
import { ErrorObservation, FileEditObservation, FileReadObservation, type Observation } from "../schema/Observation.ts"
import { CORRECT_SYSTEM_MESSAGE, correctUserMessage, draftUserMessage } from "./prompts.ts"
import { pythonFloatRepr, similarSnippets, visualizeSnippet } from "./similarSnippets.ts"

/** Most models answer at most ~4k tokens: a longer range would come back cut. */
export const MAX_LINES_TO_EDIT = 300
/** Answers without `<updated_code>` tags (or failed calls) tolerated before giving up. */
export const DRAFT_TRIES = 3

export const FAILED_TO_GET_CONTENTS =
  "Failed to get new file contents. Please try to reduce the number of edits and try again."

export interface LintInput {
  readonly path: string
  readonly before: string
  readonly after: string
}

export interface DraftEditorSettingsShape {
  /**
   * OpenHands' `enable_auto_lint`: the lint errors the edit introduced (in `after`, not in `before`),
   * each as the text to show the agent. Absent: no linting.
   */
  readonly lint?: (input: LintInput) => Effect.Effect<ReadonlyArray<string>>
  /** OpenHands' `correct_num`: rounds in which the model may fix lint errors with a new edit (default 0). */
  readonly correctionRounds?: number
}

/** Optional settings, read with the model when the runtime layer is built. */
export class DraftEditorSettings extends Context.Reference<DraftEditorSettingsShape>(
  "effect-sandbox/DraftEditorSettings",
  { defaultValue: () => ({}) }
) {}

type Run = (action: Action) => Effect.Effect<Observation, RuntimeError>

/** What a runtime holds when a `LanguageModel` was in context at build time. */
export interface DraftEditor {
  readonly edit: (action: FileEditAction, run: Run) => Effect.Effect<Observation, RuntimeError>
}

/** OpenHands' `_validate_range` (1-based, inclusive, -1 allowed), its texts verbatim. */
export const rangeError = (start: number, end: number, total: number): string | undefined => {
  const head = `Invalid range for editing: start=${start}, end=${end}, total lines=${total}.`
  if ((start < 1 && start !== -1) || start > total || (start > end && end !== -1 && start !== -1)) {
    return `${head} start must be >= 1 and <=${total} (total lines of the edited file), start <= end, or start == -1 (append to the end of the file).`
  }
  if ((end < 1 && end !== -1) || end > total || (end < start && start !== -1 && end !== -1)) {
    return `${head} end must be >= 1 and <= ${total} (total lines of the edited file), end >= start, or end == -1 (to edit till the end of the file).`
  }
  return undefined
}

/** The too-long-range error with the three most similar 20-line snippets, as OpenHands words it. */
export const tooLongError = (path: string, original: string, draft: string, startIdx: number, endIdx: number) => {
  let text = `[Edit error: The range of lines to edit is too long.]\n` +
    `[The maximum number of lines allowed to edit at once is ${MAX_LINES_TO_EDIT}. ` +
    `Got (L${startIdx + 1}-L${endIdx}) ${endIdx - startIdx} lines.]\n` +
    "Here are some snippets that maybe relevant to the provided edit.\n"
  similarSnippets(original, draft).forEach((snippet, i) => {
    text += `[begin relevant snippet ${i + 1}. Line range: L${snippet.start}-L${snippet.end}. ` +
      `Similarity: ${pythonFloatRepr(snippet.similarity)}]\n` +
      `[Browse around it via \`open_file("${path}", ${Math.floor((snippet.start + snippet.end) / 2)})\`]\n` +
      `${visualizeSnippet(snippet)}\n[end relevant snippet ${i + 1}]\n${"-".repeat(40)}\n`
  })
  return text + "Consider using `open_file` to explore around the relevant snippets if needed.\n" +
    `**IMPORTANT**: Please REDUCE the range of edits to less than ${MAX_LINES_TO_EDIT} lines by setting \`start\` and \`end\` in the edit action (e.g. \`<file_edit path="${path}" start=[PUT LINE NUMBER HERE] end=[PUT LINE NUMBER HERE] />\`). `
}

/** The lint failure text (the attempted diff and the first five errors), as OpenHands words it. */
export const lintFailure = (path: string, diff: string, errors: ReadonlyArray<string>): string =>
  `\n[Linting failed for edited file ${path}. ${errors.length} lint errors found.]\n` +
  `[begin attempted changes]\n${diff}\n[end attempted changes]\n${"-".repeat(40)}\n` +
  `${"-".repeat(20)}First 5 lint errors${"-".repeat(20)}\n` +
  errors.slice(0, 5).map((error, i) =>
    `[begin lint error ${i}]\n${strip(error)}\n[end lint error ${i}]\n${"-".repeat(40)}\n`
  ).join("")

/** The first `<updated_code>` block, a leading `#EDIT:` line dropped (none: the model must try again). */
export const extractCode = (answer: string): string | undefined => {
  const match = /<updated_code>([\s\S]*?)<\/updated_code>/.exec(answer)
  if (match === null) return undefined
  const content = match[1]!
  // Python's `content[content.find('\n') + 1:]`: without a newline the whole text stays.
  return content.startsWith("#EDIT:") ? content.slice(content.indexOf("\n") + 1) : content
}

const EditParams = Schema.Struct({
  path: Schema.String,
  content: Schema.String,
  start: Schema.optional(Schema.Int),
  end: Schema.optional(Schema.Int)
})

/** The tool OpenHands' correction round offers the model (its `LLMBasedFileEditTool`). */
const EditFile = Tool.make("edit_file", {
  description: "Edit a file: `content` is a draft of the new code for lines `start` to `end` (1-based, " +
    "inclusive; -1 for the end of the file; start -1 appends).",
  parameters: EditParams
})
const EditToolkit = Toolkit.make(EditFile)
/** The call is only read, not executed: the handler does nothing. */
const editToolkit = EditToolkit.pipe(Effect.provide(EditToolkit.toLayer({ edit_file: () => Effect.void })))

const make = (model: LanguageModel.LanguageModel, settings: DraftEditorSettingsShape): DraftEditor => {
  const askDraft = Effect.fn("draftEditor.askDraft")(function*(oldContents: string, draft: string) {
    for (let attempt = 0; attempt < DRAFT_TRIES; attempt++) {
      const answer = yield* Effect.option(model.generateText({
        prompt: [{ role: "user", content: draftUserMessage(oldContents, draft) }]
      }))
      const code = Option.isSome(answer) ? extractCode(answer.value.text) : undefined
      if (code !== undefined) return code
      yield* Effect.logDebug(`Draft editor: attempt ${attempt + 1} gave no <updated_code>`)
    }
    return undefined
  })

  /** OpenHands' `correct_edit`: within `correctionRounds`, the model answers the lint errors with one new edit. */
  const correct = (run: Run, fileContent: string, error: ErrorObservation, round: number) =>
    Effect.gen(function*() {
      if ((settings.correctionRounds ?? 0) < round + 1) return error
      const answer = yield* Effect.option(model.generateText({
        prompt: [
          { role: "system", content: CORRECT_SYSTEM_MESSAGE },
          { role: "user", content: correctUserMessage(fileContent, error.content) }
        ],
        toolkit: editToolkit
      }))
      if (Option.isNone(answer) || answer.value.toolCalls.length !== 1) return error
      const decoded = Schema.decodeUnknownOption(EditParams)(answer.value.toolCalls[0]!.params)
      if (Option.isNone(decoded)) return error
      const params = decoded.value
      return yield* edit(
        new FileEditAction({
          path: params.path,
          content: params.content,
          start: params.start ?? 1,
          end: params.end ?? -1,
          implSource: "llm_based_edit"
        }),
        run,
        round + 1
      )
    })

  /** Lint (when configured), write, and answer with the diff; a lint failure is written, then corrected. */
  const finish = (run: Run, path: string, original: string, updated: string, round: number) =>
    Effect.gen(function*() {
      const diff = unifiedDiff(original, updated, path)
      const errors = settings.lint === undefined ? [] : yield* settings.lint({ path, before: original, after: updated })
      const written = yield* run(new FileWriteAction({ path, content: updated }))
      if (errors.length > 0) {
        return yield* correct(run, updated, new ErrorObservation({ content: lintFailure(path, diff, errors) }), round)
      }
      if (written instanceof ErrorObservation) {
        return written
      }
      return new FileEditObservation({
        content: diff,
        path,
        prevExist: true,
        oldContent: original,
        newContent: updated
      })
    })

  const edit = (action: FileEditAction, run: Run, round: number): Effect.Effect<Observation, RuntimeError> =>
    Effect.gen(function*() {
      const { path } = action
      const read = yield* run(new FileReadAction({ path }))
      if (read instanceof ErrorObservation && read.content.toLowerCase().includes("file not found")) {
        const written = yield* run(new FileWriteAction({ path, content: strip(action.content) }))
        if (written instanceof ErrorObservation) return written
        return new FileEditObservation({
          content: unifiedDiff("", action.content, path),
          path,
          prevExist: false,
          oldContent: "",
          newContent: action.content
        })
      }
      if (!(read instanceof FileReadObservation)) return read
      const original = read.content
      const lines = original.split("\n")
      const invalid = rangeError(action.start, action.end, lines.length)
      if (invalid !== undefined) return new ErrorObservation({ content: invalid })
      // Appending needs no model.
      if (action.start === -1) {
        return yield* finish(run, path, original, [...lines, ...action.content.split("\n")].join("\n"), round)
      }
      const startIdx = action.start - 1
      const endIdx = action.end === -1 ? lines.length : action.end
      if (endIdx - startIdx > MAX_LINES_TO_EDIT + 1) {
        return new ErrorObservation({ content: tooLongError(path, original, action.content, startIdx, endIdx) })
      }
      const edited = yield* askDraft(lines.slice(startIdx, endIdx).join("\n"), action.content)
      if (edited === undefined) return new ErrorObservation({ content: FAILED_TO_GET_CONTENTS })
      const updated = [...lines.slice(0, startIdx), ...edited.split("\n"), ...lines.slice(endIdx)].join("\n")
      return yield* finish(run, path, original, updated, round)
    }).pipe(Effect.withSpan("draftEditor.edit", { attributes: { path: action.path, round } }))

  return { edit: (action, run) => edit(action, run, 0) }
}

/**
 * The draft editor if a `LanguageModel` is in context (with `DraftEditorSettings`, if any): runtime
 * layers read it once when they are built, so `Runtime.run` still needs nothing from its caller.
 */
export const captureDraftEditor: Effect.Effect<Option.Option<DraftEditor>> = Effect.gen(function*() {
  const model = yield* Effect.serviceOption(LanguageModel.LanguageModel)
  const settings = yield* DraftEditorSettings
  return Option.map(model, (m) => make(m, settings))
})

/** Whether `run` hands the action to the draft editor. */
export const isDraftEdit = (action: Action): action is FileEditAction =>
  action._tag === "FileEditAction" && action.implSource === "llm_based_edit"
