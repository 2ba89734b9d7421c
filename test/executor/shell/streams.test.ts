import { assert, describe, it } from "@effect/vitest"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CommandOutput } from "../../../src/executor/shell/commandOutput.ts"
import { controlKey, echoOfKey } from "../../../src/executor/shell/keys.ts"
import { hardTimeoutSuffix, pythonFloat, softTimeoutSuffix } from "../../../src/executor/shell/messages.ts"
import { makeMarkers, parsePromptJson, PromptScanner } from "../../../src/executor/shell/prompt.ts"
import { collapseCarriageReturns, TerminalTextDecoder } from "../../../src/executor/shell/terminalText.ts"

describe("prompt scanner", () => {
  const markers = makeMarkers()
  const prompt = `${markers.begin}{"exit_code": "3", "pid": "", "working_dir": "/w"}${markers.end}`

  it("splits output from prompts, even when a marker is split across chunks", () => {
    const scanner = new PromptScanner(markers)
    const text = `hello\nworld${prompt}after`
    const items = [...text].flatMap((c) => scanner.feed(c))
    const output = items.flatMap((i) => i._tag === "Output" ? [i.text] : []).join("")
    const prompts = items.filter((i) => i._tag === "Prompt")
    assert.strictEqual(output, "hello\nworldafter")
    assert.strictEqual(prompts.length, 1)
    assert.deepStrictEqual(prompts[0]!._tag === "Prompt" && prompts[0]!.metadata.exitCode, 3)
  })

  it("a line's newline is output with the line, not held back as a marker's start", () => {
    const scanner = new PromptScanner(markers)
    assert.deepStrictEqual(scanner.feed("tick 1\n"), [{ _tag: "Output", text: "tick 1\n" }])
    assert.deepStrictEqual(scanner.feed(`tick 2\n${prompt}`).map((i) => i._tag), ["Output", "Prompt"])
  })

  it("markers carry a nonce, so output cannot fake a prompt", () => {
    const other = makeMarkers()
    assert.notStrictEqual(other.begin, markers.begin)
    const scanner = new PromptScanner(markers)
    const fake = `${other.begin}{"exit_code": "0"}${other.end}`
    assert.deepStrictEqual(scanner.feed(fake + "x".repeat(40)).filter((i) => i._tag === "Prompt"), [])
  })

  it("parses PS1 JSON like OpenHands: int(float(v)), -1 on failure", () => {
    const meta = parsePromptJson(`{"pid": "", "exit_code": "1.0", "username": "u", "working_dir": ""}`)
    assert.deepStrictEqual(meta, {
      exitCode: 1,
      pid: -1,
      username: "u",
      hostname: null,
      workingDir: "",
      pyInterpreterPath: null
    })
    assert.isNull(parsePromptJson("not json"))
  })
})

describe("terminal text", () => {
  it("drops escape sequences split across chunks and normalises CRLF", () => {
    const decoder = new TerminalTextDecoder()
    const chunks = ["a\x1b[3", "1mred\x1b", "[0m\r", "\nb\x1b]0;title\x07c"]
    assert.strictEqual(chunks.map((c) => decoder.feed(c)).join(""), "ared\nbc")
  })

  it("applies carriage returns like a terminal", () => {
    assert.strictEqual(collapseCarriageReturns("10%\r50%\r100%\nnext\r"), "100%\nnext")
  })
})

describe("keys and texts", () => {
  it("maps C-<x> to control characters and echoes signal keys", () => {
    assert.strictEqual(controlKey("C-c"), "\x03")
    assert.strictEqual(controlKey("C-z"), "\x1a")
    assert.strictEqual(controlKey("C-d"), "\x04")
    assert.isNull(controlKey("C-cc"))
    assert.isNull(controlKey("ls"))
    assert.strictEqual(echoOfKey("\x03"), "^C")
    assert.strictEqual(echoOfKey("\x04"), "")
  })

  it("formats timeouts like Python", () => {
    assert.strictEqual(pythonFloat(1), "1.0")
    assert.strictEqual(pythonFloat(2.5), "2.5")
    assert.strictEqual(pythonFloat(120), "120.0")
    assert.isTrue(hardTimeoutSuffix(120).startsWith("\n[The command timed out after 120.0 seconds. You may wait"))
    assert.isTrue(softTimeoutSuffix(10).startsWith("\n[The command has no new output after 10 seconds. You may"))
  })
})

describe("command output", () => {
  it("keeps memory bounded and the full output on disk", () => {
    const dir = mkdtempSync(join(tmpdir(), "output-"))
    try {
      const output = new CommandOutput(join(dir, "out.log"))
      const line = "0123456789".repeat(10) + "\n"
      for (let i = 0; i < 20_000; i++) output.append(`${i}:${line}`)
      const segment = output.takeSegment()
      assert.isTrue(segment.gap)
      assert.isAtMost(segment.text.length, 40_000)
      assert.isTrue(segment.text.startsWith("0:0123"))
      assert.isTrue(segment.text.endsWith(`19999:${line}`))
      output.close()
      const full = readFileSync(join(dir, "out.log"), "utf8")
      assert.strictEqual(full.length, output.length)
      assert.isTrue(full.includes(`10000:${line}`))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("segments return only what came since the previous one", () => {
    const output = new CommandOutput("/nonexistent/never-written")
    output.append("one\n")
    assert.deepStrictEqual(output.takeSegment(), { text: "one\n", gap: false })
    output.append("two")
    assert.deepStrictEqual(output.takeSegment(), { text: "two", gap: false })
    assert.deepStrictEqual(output.takeSegment(), { text: "", gap: false })
  })

  it("delivers what no listener saw since the last delivery or segment, from memory", () => {
    const output = new CommandOutput("/nonexistent/never-written")
    output.append("seen\n")
    output.markDelivered()
    output.append("missed\n")
    const got: Array<string> = []
    output.deliver((text) => got.push(text))
    output.deliver((text) => got.push(text))
    assert.deepStrictEqual(got, ["missed\n"])
    output.append("in a segment\n")
    output.takeSegment()
    output.deliver((text) => got.push(text))
    assert.deepStrictEqual(got, ["missed\n"])
  })

  it("delivers undelivered output past memory from the spill file, multi-byte characters whole", () => {
    const dir = mkdtempSync(join(tmpdir(), "output-"))
    try {
      const output = new CommandOutput(join(dir, "out.log"))
      output.append("é seen\n")
      output.markDelivered()
      const lines = Array.from({ length: 30_000 }, (_, i) => `${i}: ü€😀\n`)
      for (const line of lines) output.append(line)
      const got: Array<string> = []
      output.deliver((text) => got.push(text))
      assert.isAbove(got.length, 1, "delivered in pieces of bounded size")
      assert.strictEqual(got.join(""), lines.join(""))
      output.append("after\n")
      output.deliver((text) => got.push(text))
      assert.strictEqual(got.at(-1), "after\n")
      output.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
