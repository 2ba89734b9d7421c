/**
 * The prompt protocol between us and bash (spec §3.2). After every command bash
 * prints a JSON block between markers; seeing the end marker *is* the completion
 * event, so nothing polls. Unlike OpenHands' fixed markers ours carry a random
 * nonce per shell, so no command output can fake a prompt.
 */
import { randomBytes } from "node:crypto"

export interface PromptMetadata {
  readonly exitCode: number
  readonly pid: number
  readonly username: string | null
  readonly hostname: string | null
  readonly workingDir: string | null
  readonly pyInterpreterPath: string | null
}

export interface PromptMarkers {
  readonly begin: string
  readonly end: string
}

export const makeMarkers = (): PromptMarkers => {
  const nonce = randomBytes(6).toString("hex")
  // No newline before the begin marker (OpenHands' starts a line, ours is unique by its nonce): a
  // line's newline is then output as it comes, never held back as a marker's possible start.
  return { begin: `###PS1JSON-${nonce}###\n`, end: `\n###PS1END-${nonce}###\n` }
}

/**
 * The shell's terminal settings (`stty`): no echo, and `-onlcr` (a newline stays as it is). The
 * bench's bare-terminal baseline takes the same, so it measures the terminal the shell has.
 */
export const TERMINAL_SETTINGS = "-echo -onlcr"

/**
 * The rc file bash runs at start. `stty -echo` (with `--noediting`, so readline does
 * not echo either) keeps typed commands and input out of the output, and `-onlcr` leaves a
 * newline as it is (the observation's text is the same either way); `__es_prompt`
 * saves `$?` first and JSON-escapes the cwd; the python path is looked up only when
 * PATH changes, so a prompt costs no fork. A command that started a background job gives it
 * `__es_grace` to finish before the prompt, as OpenHands' first pane capture does: `echo done &`
 * then shows `[1] <pid>`, `done` and bash's `Done` notice (printed after PROMPT_COMMAND, before
 * the prompt), while a job that runs on costs at most the grace.
 */
export const shellRcScript = (
  markers: PromptMarkers,
  options: {
    readonly loadUserRc: boolean /** A private path for the FIFO `__es_grace` waits on. */
    readonly idleFifo: string
  }
): string => {
  const json =
    `{"pid": "$!", "exit_code": "$__es_ec", "username": "\\u", "hostname": "\\h", "working_dir": "$__es_wd", "py_interpreter_path": "$__es_py"}`
  const ps1 = (markers.begin + json + markers.end).replaceAll("\n", "\\n")
  return [
    options.loadUserRc ? "[ -f ~/.bashrc ] && . ~/.bashrc" : "",
    // `-onlcr`: the terminal does not write a carriage return before each newline, which the
    // decoder would only drop again (terminalText.ts); turning every line end into two writes of
    // the line discipline, it halved a big output's rate through the PTY.
    `stty ${TERMINAL_SETTINGS} 2>/dev/null`,
    // Agent commands are the OOM killer's first victims: a memory hog dies, not the server or host services.
    "echo 1000 > /proc/self/oom_score_adj 2>/dev/null",
    "unset HISTFILE",
    "PS2=''",
    "__es_prompt() {",
    "  __es_ec=$?",
    // The cwd's JSON escaping (two pattern substitutions, ~7 µs of bash) only when it changed.
    "  if [[ $PWD != \"$__es_pwd\" ]]; then",
    "    __es_pwd=$PWD; __es_wd=${PWD//\\\\/\\\\\\\\}; __es_wd=${__es_wd//\\\"/\\\\\\\"}",
    "  fi",
    "  if [[ \"$PATH\" != \"$__es_path\" ]]; then __es_path=$PATH; __es_py=$(type -P python 2>/dev/null); fi",
    "  if [[ \"$!\" != \"$__es_bg\" ]]; then __es_bg=$!; __es_grace \"$!\" 9<> \"$__es_idle\"; fi",
    // More typed lines are waiting (a multi-line command typed in, input left for bash): no marker yet.
    // `-t 0` only polls and prints nothing, even on a closed stdin: no `2>/dev/null`, whose
    // redirection (open, save, restore: 8 syscalls) cost ~11 µs of bash's ~75 a prompt.
    "  if read -t 0; then PS1=''; else PS1=$__es_ps1; fi",
    "}",
    // Loads a command for `eval` (the file holds it up to a NUL: BashSession.ts), keeping `$?` of the previous one for it.
    "__es_load() { IFS= read -r -d '' __es_cmd < \"$1\"; return $__es_ec; }",
    // The same for a command typed in the line itself as an ANSI-C string (typedLine.ts).
    "__es_run() { __es_cmd=$1; return $__es_ec; }",
    // Waits up to 0.5 s (OpenHands' poll interval) while job `$1` runs: `read -t` on fd 9, a FIFO
    // opened read-write (so it never reads EOF), sleeps without forking (a `<(:)` pipe would set `$!`).
    `__es_idle='${options.idleFifo}'`,
    "[[ -p $__es_idle ]] || mkfifo -m 600 \"$__es_idle\" 2>/dev/null",
    "__es_grace() { local i; for i in {1..50}; do kill -0 \"$1\" 2>/dev/null || return 0; read -t 0.01 -u 9; done; }",
    "PROMPT_COMMAND=__es_prompt",
    `__es_ps1='${ps1}'`,
    "PS1=$__es_ps1",
    "alias git='git --no-pager'",
    ""
  ].join("\n")
}

const toInt = (value: unknown): number => {
  const n = Math.trunc(Number.parseFloat(String(value)))
  return Number.isFinite(n) ? n : -1
}
const toText = (value: unknown): string | null => typeof value === "string" ? value : null

/** Parse the JSON between the markers; `null` when it is not valid JSON (OpenHands skips such blocks). */
export const parsePromptJson = (json: string): PromptMetadata | null => {
  let raw: Record<string, unknown>
  try {
    raw = JSON.parse(json.trim())
  } catch {
    return null
  }
  return {
    exitCode: toInt(raw["exit_code"]),
    pid: toInt(raw["pid"]),
    username: toText(raw["username"]),
    hostname: toText(raw["hostname"]),
    workingDir: toText(raw["working_dir"]),
    pyInterpreterPath: toText(raw["py_interpreter_path"])
  }
}

export type ScanItem =
  | { readonly _tag: "Output"; readonly text: string }
  | { readonly _tag: "Prompt"; readonly metadata: PromptMetadata }

/**
 * Splits the shell's text stream into output and prompts. Text that could be the
 * start of a marker split across chunks is held back until the next chunk decides.
 */
export class PromptScanner {
  private pending = ""
  private readonly markers: PromptMarkers

  constructor(markers: PromptMarkers) {
    this.markers = markers
  }

  feed(text: string): Array<ScanItem> {
    this.pending += text
    const items: Array<ScanItem> = []
    while (true) {
      const begin = this.pending.indexOf(this.markers.begin)
      if (begin === -1) {
        const keep = partialMarkerLength(this.pending, this.markers.begin)
        const out = this.pending.slice(0, this.pending.length - keep)
        if (out.length > 0) items.push({ _tag: "Output", text: out })
        this.pending = this.pending.slice(this.pending.length - keep)
        return items
      }
      if (begin > 0) items.push({ _tag: "Output", text: this.pending.slice(0, begin) })
      const jsonStart = begin + this.markers.begin.length
      const end = this.pending.indexOf(this.markers.end, jsonStart)
      if (end === -1) {
        this.pending = this.pending.slice(begin)
        return items
      }
      const metadata = parsePromptJson(this.pending.slice(jsonStart, end))
      if (metadata !== null) items.push({ _tag: "Prompt", metadata })
      this.pending = this.pending.slice(end + this.markers.end.length)
    }
  }
}

/** Length of the longest suffix of `text` that is a proper prefix of `marker`. */
const partialMarkerLength = (text: string, marker: string): number => {
  for (let n = Math.min(marker.length - 1, text.length); n > 0; n--) {
    if (marker.startsWith(text.slice(text.length - n))) return n
  }
  return 0
}
