/**
 * `serverExitedMessage` writes the start failure E2BRuntime and the Runloop driver wrote before they
 * were drivers, so the hosted runtime (src/hosted/provisioner.ts) writes it for every driver without
 * a user seeing another text.
 */
import { assert, describe, it } from "@effect/vitest"
import { serverExitedMessage } from "../../src/hosted/startFailure.ts"

/** `line 1\n...\nline n\n`, as a server prints them. */
const lines = (count: number): string => Array.from({ length: count }, (_, i) => `line ${i + 1}\n`).join("")

describe("serverExitedMessage", () => {
  it("names the provider, the sandbox and the exit code, then the whole output when it is short", () => {
    assert.strictEqual(
      serverExitedMessage({
        provider: "E2B",
        sandboxId: "sbx-1",
        exitCode: 1,
        output: "Traceback (most recent call last):\nModuleNotFoundError: No module named 'x'\n"
      }),
      "The action server in E2B sandbox sbx-1 exited with code 1 before it answered. Its last output:\n"
        + "Traceback (most recent call last):\nModuleNotFoundError: No module named 'x'"
    )
  })

  it("keeps the last 20 lines of a longer output", () => {
    assert.strictEqual(
      serverExitedMessage({ provider: "E2B", sandboxId: "sbx-2", exitCode: 137, output: lines(25) }),
      "The action server in E2B sandbox sbx-2 exited with code 137 before it answered. Its last output:\n"
        + "line 6\nline 7\nline 8\nline 9\nline 10\nline 11\nline 12\nline 13\nline 14\nline 15\nline 16\n"
        + "line 17\nline 18\nline 19\nline 20\nline 21\nline 22\nline 23\nline 24\nline 25"
    )
  })

  it("counts the lines after trailing blank lines are cut, and cuts leading blank space", () => {
    assert.strictEqual(
      serverExitedMessage({ provider: "E2B", sandboxId: "s", exitCode: 2, output: `${lines(21)}\n\n  \n` }),
      `The action server in E2B sandbox s exited with code 2 before it answered. Its last output:\n${
        lines(21).trimEnd().split("\n").slice(1).join("\n")
      }`
    )
    assert.strictEqual(
      serverExitedMessage({ provider: "E2B", sandboxId: "s", exitCode: 2, output: "\n\n  boom\n" }),
      "The action server in E2B sandbox s exited with code 2 before it answered. Its last output:\nboom"
    )
  })

  it("says so with nothing after the colon when the server printed nothing", () => {
    assert.strictEqual(
      serverExitedMessage({ provider: "Modal", sandboxId: "sb-9", exitCode: -1, output: "" }),
      "The action server in Modal sandbox sb-9 exited with code -1 before it answered. Its last output:\n"
    )
  })

  it("uses the provider's word for a sandbox: Runloop's devbox", () => {
    assert.strictEqual(
      serverExitedMessage({
        provider: "Runloop",
        sandboxNoun: "devbox",
        sandboxId: "dbx_1",
        exitCode: 3,
        output: "x\n"
      }),
      "The action server in Runloop devbox dbx_1 exited with code 3 before it answered. Its last output:\nx"
    )
  })
})
