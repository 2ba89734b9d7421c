/**
 * The file editor behind agent_skills' Python `file_editor`: reads one JSON
 * request on stdin (`command`, `path`, `file_text`, `old_str`, `new_str`,
 * `insert_line`, `view_range`), runs OHEditor (../editor) with paths relative to
 * this process's cwd and no workspace boundary (as OpenHands' agentskills editor,
 * which works on any path the kernel can reach), and prints the result as
 * openhands-aci's `ToolResult`/`CLIResult` fields plus `formatted_output_and_error`.
 * The undo history is kept in `$EFFECT_SANDBOX_EDITOR_HISTORY`, so it survives
 * between calls. It also reads documents for the `parse_*` helpers (`{"parse": path}`).
 * Bundled as payload/editor.mjs.
 */
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { docxParagraphs, pdfPages } from "../editor/documents.ts"
import { EditHistory, type EditorRequest, type EditorResult, makeEditor } from "../editor/OHEditor.ts"
import { pptxSlides } from "../editor/ooxml.ts"
import { pathStr, suffix } from "../editor/python.ts"
import { Workspace } from "../workspace.ts"
import { SKILLS_ENV } from "./agentSkills.ts"

/** The result fields openhands-aci's `file_editor` serialises, in its order. */
export interface AciResult {
  readonly output: string | null
  readonly error: string | null
  readonly path?: string
  readonly prev_exist?: boolean
  readonly old_content?: string | null
  readonly new_content?: string | null
  readonly formatted_output_and_error: string
}

const ERROR_PREFIX = "ERROR:\n"

const toAci = (request: EditorRequest, result: EditorResult): AciResult =>
  result.isError
    ? { output: null, error: result.output.slice(ERROR_PREFIX.length), formatted_output_and_error: result.output }
    : {
      output: result.output,
      error: null,
      path: pathStr(request.path),
      prev_exist: request.command !== "create",
      old_content: result.oldFile,
      new_content: result.newFile,
      formatted_output_and_error: result.output
    }

type Json = Record<string, unknown>

/** A request field: a string or absent; anything else is the caller's TypeError, reported as a tool error. */
const text = (json: Json, key: string): string | null => {
  const value = json[key]
  if (value === undefined || value === null) return null
  if (typeof value !== "string") throw new TypeError(`${key} must be a string, not ${JSON.stringify(value)}`)
  return value
}

const parseRequest = (json: Json): EditorRequest => {
  const insertLine = json["insert_line"]
  const viewRange = json["view_range"]
  return {
    command: text(json, "command") ?? "",
    path: text(json, "path") ?? "",
    fileText: text(json, "file_text"),
    oldStr: text(json, "old_str"),
    newStr: text(json, "new_str"),
    insertLine: typeof insertLine === "number" || typeof insertLine === "string" ? insertLine : null,
    viewRange: Array.isArray(viewRange) ? viewRange.map(Number) : null
  }
}

/**
 * What agent_skills' `parse_pdf` / `parse_docx` / `parse_pptx` print, as data (the Python
 * side formats it as OpenHands' helpers do): a request `{"parse": "<path>"}`.
 */
const parseDocument = async (path: string) => {
  const bytes = readFileSync(path)
  switch (suffix(path).toLowerCase()) {
    case ".pdf":
      return { pages: await pdfPages(bytes) }
    case ".docx":
      return { paragraphs: await docxParagraphs(bytes) }
    case ".pptx":
      return { slides: (await pptxSlides(bytes)).map((shapes) => shapes.map((shape) => shape.text)) }
    default:
      throw new Error(`${path} is not a .pdf, .docx or .pptx file`)
  }
}

const main = async () => {
  const json = JSON.parse(readFileSync(0, "utf8")) as Json
  if (typeof json["parse"] === "string") {
    const reply = await parseDocument(json["parse"]).catch((error: unknown) => ({
      error: error instanceof Error ? error.message : String(error)
    }))
    process.stdout.write(JSON.stringify(reply))
    return
  }
  let reply: AciResult
  try {
    const request = parseRequest(json)
    const cwd = process.cwd()
    const editor = makeEditor(
      new Workspace({ root: cwd, mountPath: cwd, restricted: false }),
      new EditHistory(process.env[SKILLS_ENV.editorHistory])
    )
    reply = toAci(request, await Effect.runPromise(editor.run(request, cwd)))
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    reply = { output: null, error: message, formatted_output_and_error: `${ERROR_PREFIX}${message}` }
  }
  process.stdout.write(JSON.stringify(reply))
}

await main()
