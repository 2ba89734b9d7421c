/**
 * `serverFiles` (src/hosted/serverFiles.ts) decides, for E2B, Daytona and Runloop alike, where the
 * action server comes from, on what the probe printed: the image's files, the payload uploaded into
 * the user's home, or one of the refusals every such provider words the same. A sandbox here is a
 * script of answers; the stand-in tests (test/providers/{e2b,daytona,runloop}) run the real thing.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { runningWorkspace, serverFiles, type ServerSource } from "../../src/hosted/serverFiles.ts"
import { serverPayload } from "../../src/serverStart/payload.ts"

/** A sandbox whose probe prints `probe`: the commands it was given and the files put into it. */
const sandbox = (probe: string, options: Partial<ServerSource> = {}) => {
  const commands: Array<string> = []
  const put: Array<{ readonly destination: string; readonly fromHome: string }> = []
  const source: ServerSource = {
    provider: "Runloop",
    noun: "blueprint",
    name: "bp",
    upload: true,
    run: (_what, command) => Effect.sync(() => (commands.push(command), `${probe}\n`)),
    put: (files) => Effect.sync(() => put.push(...files)),
    ...options
  }
  return { source, commands, put }
}

const refusal = (probe: string, options: Partial<ServerSource> = {}) =>
  serverFiles(sandbox(probe, options).source).pipe(
    Effect.flip,
    Effect.map((error) => [error._tag, error.message])
  )

const PAYLOAD = ".effect-sandbox/payload"
const HOW = "make the blueprint from the runtime image (docs/runtimes/runloop.md, \"Making the blueprint\")"
const LACKS = "The Runloop blueprint bp has no action-server payload (/opt/effect-sandbox/payload/server.mjs)"

describe("serverFiles", () => {
  it.effect("an image made from the runtime image runs its own server in /workspace, nothing uploaded", () =>
    Effect.gen(function*() {
      const { commands, put, source } = sandbox("template\nwritable\n/home/user")
      assert.deepStrictEqual(yield* serverFiles(source), {
        node: "/opt/effect-sandbox/bin/node",
        entry: "/opt/effect-sandbox/payload/server.mjs",
        workspace: "/workspace"
      })
      assert.strictEqual(commands.length, 1)
      assert.deepStrictEqual(put, [])
    }))

  it.effect(
    "an image with a recent Node gets the payload in ~/.effect-sandbox/payload, its directories made first",
    () =>
      Effect.gen(function*() {
        const { commands, put, source } = sandbox("node /usr/bin/node 22.19.0\nread-only\n/home/user")
        assert.deepStrictEqual(yield* serverFiles(source), {
          node: "/usr/bin/node",
          entry: "/home/user/.effect-sandbox/payload/server.mjs",
          workspace: "/home/user/workspace"
        })
        const { manifest } = yield* serverPayload
        assert.deepStrictEqual(
          put.map((file) => [file.destination, file.fromHome]),
          manifest.files.map((file) => [`/home/user/${PAYLOAD}/${file}`, `${PAYLOAD}/${file}`])
        )
        assert.strictEqual(commands.length, 2)
        assert.match(commands[1]!, /^mkdir -p .*'\/home\/user\/\.effect-sandbox\/payload' .*'\/home\/user\/workspace'$/)
      }),
    120_000 // from source, the payload is built first
  )

  it.effect("a provider that makes the workspace itself (beside the probe) keeps it, neither made nor tested here", () =>
    Effect.gen(function*() {
      const uploaded = sandbox("node /usr/bin/node 24.1.0\nread-only\n/root", { workspace: "/workspace" })
      assert.strictEqual((yield* serverFiles(uploaded.source)).workspace, "/workspace")
      assert.notInclude(uploaded.commands[1]!, "'/workspace'", "the user's mkdir leaves the provider's workspace alone")
      // Probed before the provider's mkdir finished: the image's server is still taken.
      const image = sandbox("template\nread-only\n/home/user", { workspace: "/workspace" })
      assert.deepStrictEqual(yield* serverFiles(image.source), {
        node: "/opt/effect-sandbox/bin/node",
        entry: "/opt/effect-sandbox/payload/server.mjs",
        workspace: "/workspace"
      })
    }))

  it.effect("each refusal says what the image lacks and how to make it, in one set of words", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* refusal("template\nread-only\n/home/user"), [
        "RuntimeStartError",
        `The Runloop blueprint bp has no /workspace its user can write: ${HOW}.`
      ])
      assert.deepStrictEqual(yield* refusal("node /usr/bin/node 24.1.0\nwritable\n/home/user", { upload: false }), [
        "RuntimeStartError",
        `${LACKS} and uploadPayload is off: ${HOW}.`
      ])
      assert.deepStrictEqual(yield* refusal("none\nread-only\n/home/user"), [
        "RuntimeStartError",
        `${LACKS} and no Node.js on its PATH to run an uploaded one: ${HOW}, or use a blueprint with Node 22.19 or newer.`
      ])
      assert.deepStrictEqual(yield* refusal("node /usr/bin/node 22.18.1\nread-only\n/home/user"), [
        "RuntimeStartError",
        `${LACKS}, and its Node.js 22.18.1 (/usr/bin/node) is older than the 22.19 the payload needs: ${HOW}, ` +
        "or use a blueprint with a newer Node."
      ])
    }))

  it.effect("a running server's workspace is what the sandbox answers", () =>
    Effect.gen(function*() {
      const { commands, source } = sandbox("/home/user/workspace")
      assert.strictEqual(yield* runningWorkspace(source.run), "/home/user/workspace")
      assert.include(commands[0]!, "/opt/effect-sandbox/payload/server.mjs")
    }))
})
