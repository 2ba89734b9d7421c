/**
 * OpenHands' microagents as data: the legacy `.openhands_instructions` file and the Markdown files
 * under `.openhands/microagents` (front matter + body), read through any `Runtime` (`listFiles` +
 * `read`), for an agent to put into its prompt.
 */
import { Effect, Schema } from "effect"
import { FileReadAction } from "../schema/Action.ts"
import { FileReadObservation } from "../schema/Observation.ts"
import { Runtime } from "../services/Runtime.ts"
import { markdownFiles } from "./microagentFiles.ts"

/** A microagent: `repo` (always in context), `knowledge` (when a trigger word appears), `task` (has inputs). */
export class Microagent extends Schema.Class<Microagent>("Microagent")({
  name: Schema.String,
  type: Schema.Literals(["repo", "knowledge", "task"]),
  /** Where it was read, in the sandbox. */
  source: Schema.String,
  /** The body (after the front matter). */
  content: Schema.String,
  triggers: Schema.Array(Schema.String)
}) {}

const unquote = (s: string) => s.trim().replace(/^(["'])(.*)\1$/, "$2")

/** A front-matter value as a list (a scalar is a list of one). */
const asList = (v: string | Array<string> | undefined) => v === undefined ? [] : Array.isArray(v) ? v : [v]

/** `key: value`, `key: [a, b]` and `key:` followed by `- item` lines: the front matter microagents use. */
const parseFrontMatter = (text: string): Record<string, string | Array<string>> => {
  const fields: Record<string, string | Array<string>> = {}
  let list: Array<string> | undefined
  for (const line of text.split("\n")) {
    const item = /^\s+-\s*(.*)$/.exec(line)
    if (item !== null && list !== undefined) {
      list.push(unquote(item[1]!))
      continue
    }
    const field = /^([\w-]+):\s*(.*)$/.exec(line)
    if (field === null) continue
    const value = field[2]!.trim()
    if (value === "") {
      list = []
      fields[field[1]!] = list
    } else {
      list = undefined
      fields[field[1]!] = value.startsWith("[") && value.endsWith("]")
        ? value.slice(1, -1).split(",").map(unquote).filter((s) => s !== "")
        : unquote(value)
    }
  }
  return fields
}

/** A microagent file: `name` defaults to its path under the directory without `.md`. */
export const parseMicroagent = (relativePath: string, source: string, text: string): Microagent => {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/.exec(text)
  const fields = match === null ? {} : parseFrontMatter(match[1]!)
  const body = (match === null ? text : match[2]!).trim()
  const triggers = asList(fields["triggers"])
  const declared = fields["type"]
  const type = declared === "knowledge" || declared === "task" || declared === "repo"
    ? declared
    : fields["inputs"] !== undefined
    ? "task"
    : triggers.length > 0
    ? "knowledge"
    : "repo"
  const name = typeof fields["name"] === "string" ? fields["name"] : relativePath.replace(/\.md$/, "")
  return new Microagent({ name, type, source, content: body, triggers })
}

export interface MicroagentOptions {
  /** The cloned repository (`owner/repo` or URL): read from `<workspace>/<name>` instead of the workspace. */
  readonly repository?: string
}

/**
 * OpenHands' `get_microagents_from_selected_repo` without the org-level repository: the legacy
 * `.openhands_instructions` (workspace first, then the repository) as the `repo_legacy` repo
 * microagent, then every microagent file under `.openhands/microagents` (directory links not
 * followed, depth and count capped: microagentFiles.ts).
 */
export const loadMicroagents = Effect.fn("workspace.loadMicroagents")(function*(options: MicroagentOptions = {}) {
  const rt = yield* Runtime
  const workspace = rt.info.workspace
  const repoName = options.repository?.replace(/\/+$/, "").split("/").pop()?.replace(/\.git$/, "")
  const root = repoName === undefined ? workspace : `${workspace}/${repoName}`
  const read = (path: string) =>
    Effect.map(
      rt.run(new FileReadAction({ path })),
      (obs) => obs instanceof FileReadObservation ? obs.content : undefined
    )
  const agents: Array<Microagent> = []
  let legacyPath = `${workspace}/.openhands_instructions`
  let legacy = yield* read(legacyPath)
  if (legacy === undefined && root !== workspace) {
    legacyPath = `${root}/.openhands_instructions`
    legacy = yield* read(legacyPath)
  }
  if (legacy !== undefined) {
    agents.push(
      new Microagent({ name: "repo_legacy", type: "repo", source: legacyPath, content: legacy, triggers: [] })
    )
  }
  const dir = `${root}/.openhands/microagents`
  for (const file of yield* markdownFiles(dir)) {
    const text = yield* read(`${dir}/${file}`)
    if (text !== undefined) agents.push(parseMicroagent(file, `${dir}/${file}`, text))
  }
  return agents
})
