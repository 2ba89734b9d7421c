/**
 * Secrets given as `Redacted`: masked in every string of an observation (nested
 * fields too) and of typed errors, including fragments a truncation marker split,
 * and an MCP remote server's key never printed.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger, Redacted, References } from "effect"
import { createServer } from "node:http"
import type { McpRemoteServer } from "../../src/executor/mcp/McpHub.ts"
import {
  BrowserOutputObservation,
  CliRuntime,
  CmdOutputMetadata,
  CmdOutputObservation,
  ErrorObservation,
  FileDownloadObservation,
  FileEditObservation,
  FileReadObservation,
  FileWriteObservation,
  IPythonRunCellObservation,
  McpObservation,
  Runtime,
  RuntimeRequestError,
  RuntimeStartError,
  TestRuntime,
  truncateCmdOutput,
  TRUNCATION_NOTICE,
  truncationNotice
} from "../../src/index.ts"
import { makeRuntime } from "../../src/runtime/makeRuntime.ts"
import { makeStatus } from "../../src/runtime/statusCell.ts"
import { MASK, SecretMask } from "../../src/schema/secrets.ts"

const SECRET = "tok-0123456789abcdefghij"

const maskOf = (...secrets: ReadonlyArray<string>) => {
  const mask = new SecretMask()
  for (const secret of secrets) mask.add(secret)
  return mask
}

/** One observation of each kind, with the secret in nested strings (arrays, records, metadata). */
const observations = [
  new CmdOutputObservation({
    content: `a ${SECRET}`,
    command: `echo ${SECRET}`,
    metadata: new CmdOutputMetadata({ prefix: `p ${SECRET}`, suffix: `s ${SECRET}`, workingDir: `/w/${SECRET}` })
  }),
  new IPythonRunCellObservation({ content: SECRET, code: `print("${SECRET}")`, imageUrls: [`data:${SECRET}`] }),
  new FileReadObservation({ content: SECRET, path: `/w/${SECRET}.txt` }),
  new FileWriteObservation({ path: `/w/${SECRET}.txt` }),
  new FileEditObservation({ content: SECRET, path: "/w/f", oldContent: SECRET, newContent: "x", diff: `+${SECRET}` }),
  new ErrorObservation({ content: `failed: ${SECRET}` }),
  new BrowserOutputObservation({
    content: SECRET,
    url: `https://example.com/?token=${SECRET}`,
    triggerByAction: "browse",
    openPagesUrls: [`https://example.com/?token=${SECRET}`],
    axtreeObject: { nodes: [{ name: { value: `Token: ${SECRET}` }, role: "StaticText" }] },
    domObject: { strings: ["html", SECRET] },
    extraElementProperties: { [`key-${SECRET}`]: { text: SECRET } },
    lastBrowserActionError: `error at ${SECRET}`
  }),
  new McpObservation({
    content: JSON.stringify({ content: [{ type: "text", text: SECRET }] }),
    name: "echo",
    arguments: { message: SECRET, nested: [{ deep: SECRET }] }
  }),
  new FileDownloadObservation({ content: SECRET, filePath: `/w/${SECRET}` })
]

describe("SecretMask", () => {
  it("masks a secret in every string of every kind of observation, nested ones included", () => {
    const mask = maskOf(SECRET)
    for (const observation of observations) {
      const masked = mask.deep(observation)
      assert.notStrictEqual(masked, observation)
      assert.strictEqual(masked.constructor, observation.constructor)
      const json = JSON.stringify(masked)
      assert.notInclude(json, SECRET, observation._tag)
      assert.include(json, MASK, observation._tag)
    }
    const browser = mask.deep(observations[6] as BrowserOutputObservation)
    assert.strictEqual(browser.url, `https://example.com/?token=${MASK}`)
    assert.deepStrictEqual(browser.axtreeObject, { nodes: [{ name: { value: `Token: ${MASK}` }, role: "StaticText" }] })
    assert.deepStrictEqual(browser.extraElementProperties, { [`key-${MASK}`]: { text: MASK } })
    const cmd = mask.deep(observations[0] as CmdOutputObservation)
    assert.instanceOf(cmd.metadata, CmdOutputMetadata)
    assert.strictEqual(cmd.metadata.workingDir, `/w/${MASK}`)
  })

  it("returns the same objects when nothing changes, and everything as is without secrets", () => {
    const clean = new BrowserOutputObservation({
      content: "c",
      url: "u",
      triggerByAction: "t",
      axtreeObject: { nodes: [{ name: "n" }] }
    })
    assert.strictEqual(maskOf(SECRET).deep(clean), clean)
    for (const observation of observations) assert.strictEqual(new SecretMask().deep(observation), observation)
  })

  it("masks secrets in typed errors' messages, keeping their class and other fields", () => {
    const error = new RuntimeRequestError({ status: 400, message: `bad output: ${SECRET}` })
    const masked = maskOf(SECRET).deep(error)
    assert.instanceOf(masked, RuntimeRequestError)
    assert.strictEqual(masked.status, 400)
    assert.strictEqual(masked.message, `bad output: ${MASK}`)
  })

  it("masks the halves of a secret that the 30,000-character cut split (a server that does not mask)", () => {
    // 15,000 characters are kept on each side of the notice: the cuts fall inside both copies.
    const output = "a".repeat(14_990) + SECRET + "b".repeat(5_000) + SECRET + "c".repeat(14_990)
    const truncated = truncateCmdOutput(output)
    assert.include(truncated, SECRET.slice(0, 10) + TRUNCATION_NOTICE + SECRET.slice(14))
    assert.strictEqual(
      maskOf(SECRET).text(truncated),
      "a".repeat(14_990) + MASK + TRUNCATION_NOTICE + MASK + "c".repeat(14_990)
    )
  })

  it("masks the halves of a secret around a truncation notice that carries our note", () => {
    const notice = truncationNotice("all 40000 characters are saved in /tmp/s/command-1.log")
    const output = "a".repeat(14_990) + SECRET + "b".repeat(5_000) + SECRET + "c".repeat(14_990)
    const truncated = truncateCmdOutput(output, notice)
    assert.strictEqual(
      maskOf(SECRET).text(truncated),
      "a".repeat(14_990) + MASK + notice + MASK + "c".repeat(14_990)
    )
  })

  it("masks a secret's prefix before the editor's clipped notice, and overlapping secrets in one pass", () => {
    const mask = maskOf(SECRET, "tok")
    assert.strictEqual(
      mask.text(`x ${SECRET.slice(0, 7)}<response clipped><NOTE>`),
      `x ${MASK}<response clipped><NOTE>`
    )
    assert.strictEqual(mask.text(`${SECRET} tok`), `${MASK} ${MASK}`)
  })

  it("masks streamed chunks, holding back a chunk's end that may begin a secret", () => {
    const seen: Array<string> = []
    const listener = maskOf(SECRET).stream((text) => seen.push(text))
    listener(`one ${SECRET.slice(0, 5)}`)
    listener(`${SECRET.slice(5)} two t`)
    listener("hree")
    assert.deepStrictEqual(seen, ["one ", `${MASK} two `, "three"])
  })
})

describe("the runtime wrapper", () => {
  it.effect("masks nested fields of observations (TestRuntime)", () =>
    Effect.gen(function*() {
      const rt = yield* Runtime
      yield* rt.addEnvVars({ TOKEN: Redacted.make(SECRET) })
      const browsed = yield* rt.browse("https://example.com")
      assert.notInclude(JSON.stringify(browsed), SECRET)
      assert.strictEqual((browsed as BrowserOutputObservation).openPagesUrls[0], `https://example.com/?token=${MASK}`)
    }).pipe(Effect.provide(TestRuntime.layer({ respond: () => observations[6]! }))))

  it.effect("masks secrets in typed errors that echo output, and sends the secret names to the backend", () =>
    Effect.gen(function*() {
      const sent: Array<ReadonlyArray<string>> = []
      const rt = makeRuntime({
        info: {
          id: "t",
          kind: "test",
          workspace: "/w",
          urls: {},
          capabilities: { pause: false, ipython: false, browser: false, mcp: false, snapshot: false }
        },
        defaultTimeoutSeconds: 120,
        execute: () => Effect.fail(new RuntimeRequestError({ status: 400, message: `echoed ${SECRET}` })),
        copyTo: () => Effect.void,
        copyFrom: () => Effect.void,
        listFiles: () => Effect.fail(new RuntimeRequestError({ status: 400, message: `no ${SECRET}` })),
        listTools: Effect.succeed([]),
        setEnv: (_vars, secrets) => Effect.sync(() => void sent.push(secrets))
      }, yield* makeStatus)
      yield* rt.addEnvVars({ TOKEN: Redacted.make(SECRET), PLAIN: "p" })
      assert.deepStrictEqual(sent, [["TOKEN"]])
      const error = yield* Effect.flip(rt.runCommand("x"))
      assert.strictEqual(error.message, `echoed ${MASK}`)
      assert.strictEqual((yield* Effect.flip(rt.listFiles())).message, `no ${MASK}`)
    }))
})

describe("McpRemoteServer.apiKey", () => {
  const server: McpRemoteServer = {
    name: "remote",
    url: "http://127.0.0.1:1/mcp",
    transport: "http",
    apiKey: Redacted.make(SECRET)
  }

  it.effect("prints as redacted: String(), JSON.stringify, Effect logging", () =>
    Effect.gen(function*() {
      const logged: Array<string> = []
      const logger = Logger.make((options) => {
        logged.push(Logger.formatLogFmt.log(options), Logger.formatJson.log(options))
      })
      yield* Effect.logInfo("config", server).pipe(
        Effect.provide(Logger.layer([logger])),
        Effect.provideService(References.MinimumLogLevel, "All")
      )
      assert.strictEqual(String(server.apiKey), "<redacted>")
      assert.notInclude(JSON.stringify(server), SECRET)
      assert.include(JSON.stringify(server), "<redacted>")
      assert.lengthOf(logged, 2)
      for (const line of logged) {
        assert.include(line, "<redacted>")
        assert.notInclude(line, SECRET)
      }
    }))

  it.live("is sent as X-Session-API-Key, and is masked in a start error that echoes it", () =>
    Effect.gen(function*() {
      // A server that refuses every request, echoing the key it was sent (as a careless server might).
      const received: Array<string | undefined> = []
      const http = createServer((request, response) => {
        received.push(request.headers["x-session-api-key"] as string | undefined)
        response.writeHead(400, { "content-type": "text/plain" })
        response.end(`bad key ${request.headers["x-session-api-key"]}`)
      })
      yield* Effect.acquireRelease(
        Effect.promise(() => new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))),
        () => Effect.promise(() => new Promise<void>((resolve) => http.close(() => resolve())))
      )
      const { port } = http.address() as { port: number }
      const error = yield* Effect.flip(
        Layer.build(CliRuntime.layer({ mcp: { remote: [{ ...server, url: `http://127.0.0.1:${port}/mcp` }] } }))
      )
      assert.instanceOf(error, RuntimeStartError)
      assert.include(error.message, `bad key ${MASK}`)
      assert.notInclude(error.message, SECRET)
      assert.strictEqual(received[0], SECRET)
    }).pipe(Effect.scoped))
})
