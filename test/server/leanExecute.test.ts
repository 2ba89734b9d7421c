/**
 * The lean `POST /execute_action` (src/server/leanExecute.ts) answers what the routed one answers,
 * byte for byte, and takes only the requests it may: everything else reaches Effect's app as before.
 * - Two servers on one workspace, one lean (Effect's native tracer) and one routed (a recording
 *   tracer: the lean path steps aside when spans are exported), get the same raw requests; their
 *   raw answers must be equal but for the `Date` line (and a command's shell pid).
 * - The handler alone behind a front door whose fallback answers `299 routed` shows which requests
 *   it takes, and that stopping it, or a client going away, interrupts an action in flight.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Fiber, Layer, Redacted, Scope, Tracer } from "effect"
import { HttpServer } from "effect/http"
import { createServer, type Server } from "node:http"
import { type AddressInfo, connect } from "node:net"
import { DEFAULT_LIMITS, Limits } from "../../src/executor/limits.ts"
import { CmdOutputObservation } from "../../src/schema/Observation.ts"
import * as ActionServer from "../../src/server/ActionServer.ts"
import { type FrontDoor, withFrontDoor } from "../../src/server/frontDoor.ts"
import { leanExecute } from "../../src/server/leanExecute.ts"
import { keyDigest } from "../../src/server/sessionKey.ts"
import { ActionExecutor } from "../../src/services/ActionExecutor.ts"
import { recordingTracer } from "../recordingTracer.ts"
import { tempDir } from "./helpers.ts"

const KEY = "lean-execute-key"
const LIMIT = 512

/** One raw HTTP/1.1 exchange on a fresh connection (closed by the server after its answer). */
const raw = (port: number, head: string, body = "") =>
  Effect.promise(() =>
    new Promise<string>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1")
      const chunks: Array<Buffer> = []
      socket.on("data", (chunk: Buffer) => chunks.push(chunk)).on("error", reject)
      socket.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")))
      socket.write(`${head}\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n${body}`)
    })
  )

/** A request head for `/execute_action` with a body of `body`. */
const post = (body: string, headers: Record<string, string> = { "x-session-api-key": KEY }) =>
  [
    "POST /execute_action HTTP/1.1",
    "content-type: application/json",
    `content-length: ${Buffer.byteLength(body)}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)
  ].join("\r\n")

const withoutDate = (answer: string) => answer.replace(/\r\ndate: [^\r]*/i, "")

/** A command's observation names its shell's pid, which differs between two servers. */
const pidless = (answer: string) => answer.replace(/"pid":\d+/, "\"pid\":0").replace(/content-length: \d+/, "")

/** An action server on `workspace`, its port; `exported` gives it a tracer that records (so it routes). */
const startServer = (workspace: string, name: string, exported: boolean) =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const server = ActionServer.layer({
      port: 0,
      host: "127.0.0.1",
      workingDir: workspace,
      sessionApiKey: Redacted.make(KEY),
      noChangeTimeoutSeconds: 5,
      sessionId: `lean-execute-${name}-${process.pid}`,
      fileViewerUrlFile: `${workspace}/.viewer-url-${name}`,
      limits: { ...DEFAULT_LIMITS, jsonBodyBytes: LIMIT }
    })
    const context = yield* Layer.buildWithScope(
      exported ? server.pipe(Layer.provide(Layer.succeed(Tracer.Tracer)(recordingTracer().tracer))) : server,
      scope
    )
    const address = Context.get(context, HttpServer.HttpServer).address
    return address._tag === "UnixPathAddress" ? 0 : address.port
  })

describe("the lean /execute_action answers as the routed one", () => {
  it.live("the same bytes for actions, bad bodies and refused keys", () =>
    Effect.gen(function*() {
      const workspace = yield* tempDir("lean-execute-")
      const lean = yield* startServer(workspace, "lean", false)
      const routed = yield* startServer(workspace, "routed", true)
      const cases: ReadonlyArray<readonly [string, string, Record<string, string>?]> = [
        ["a missing file", `{"action":{"action":"read","args":{"path":"/lean-missing/x"}}}`],
        ["an unknown edit command", `{"action":{"action":"edit","args":{"command":"fly","path":"/x"}}}`],
        ["a command", `{"action":{"action":"run","args":{"command":"echo lean-$((6*7))"}}}`],
        ["bad JSON", `{"action":`],
        ["an unknown action type", `{"action":{"action":"fly"}}`],
        ["a body that is no action", `[1,2]`],
        ["too deep a body", "[".repeat(LIMIT)],
        ["an empty body", ""],
        ["a body over the limit", "x".repeat(LIMIT + 1)],
        ["no key", `{"action":{"action":"fly"}}`, {}],
        ["a wrong key", `{"action":{"action":"fly"}}`, { "x-session-api-key": "wrong" }],
        ["a bearer key", `{"action":{"action":"fly"}}`, { authorization: `Bearer ${KEY}` }]
      ]
      const statuses: Array<string> = []
      for (const [what, body, headers] of cases) {
        const fromLean = withoutDate(yield* raw(lean, post(body, headers), body))
        const fromRouted = withoutDate(yield* raw(routed, post(body, headers), body))
        assert.strictEqual(
          what === "a command" ? pidless(fromLean) : fromLean,
          what === "a command" ? pidless(fromRouted) : fromRouted,
          what
        )
        statuses.push(`${what}: ${fromLean.slice(9, 12)}`)
      }
      assert.deepStrictEqual(statuses, [
        "a missing file: 200",
        "an unknown edit command: 200",
        "a command: 200",
        "bad JSON: 400",
        "an unknown action type: 400",
        "a body that is no action: 400",
        "too deep a body: 400",
        "an empty body: 400",
        "a body over the limit: 413",
        "no key: 403",
        "a wrong key: 403",
        "a bearer key: 400"
      ])
      // `GET /alive` too (leanAlive.ts), with and without a key.
      for (const head of ["GET /alive HTTP/1.1", `GET /alive HTTP/1.1\r\nx-session-api-key: ${KEY}`]) {
        const fromLean = withoutDate(yield* raw(lean, head))
        assert.strictEqual(fromLean, withoutDate(yield* raw(routed, head)), head)
        assert.match(fromLean, /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\n\{"status":"ok"\}$/)
      }
    }).pipe(Effect.scoped), 30_000)
})

/** A stand-in executor: with `hold`, every action runs (`started`) until interrupted (`interrupted`). */
const standInExecutor = (started: Deferred.Deferred<void>, interrupted: Deferred.Deferred<void>, hold: boolean) =>
  Layer.succeed(ActionExecutor)(
    {
      execute: () =>
        hold
          ? Deferred.succeed(started, undefined).pipe(
            Effect.andThen(Effect.never),
            Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
          )
          : Effect.succeed(new CmdOutputObservation({ content: "stand-in", command: "x" }))
    } as unknown as ActionExecutor["Service"]
  )

/** The lean handler alone in front of a server whose own listener answers `299 routed`; its port. */
const frontedServer = (options: { readonly exported?: boolean; readonly hold?: boolean } = {}) =>
  Effect.gen(function*() {
    const started = yield* Deferred.make<void>()
    const interrupted = yield* Deferred.make<void>()
    const door: FrontDoor = { handler: undefined, held: undefined }
    const server: Server = withFrontDoor(
      createServer((request, response) => {
        request.resume()
        response.writeHead(299).end("routed")
      }),
      door
    )
    yield* Effect.acquireRelease(
      Effect.callback<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
      () => Effect.sync(() => server.close())
    )
    const scope = yield* Scope.make()
    const lean = leanExecute(door, Redacted.make(keyDigest(KEY)), { startedAt: 0, lastActionAt: 0 }).pipe(
      Layer.provide(standInExecutor(started, interrupted, options.hold ?? false)),
      Layer.provide(Layer.succeed(Limits)({ ...DEFAULT_LIMITS, jsonBodyBytes: LIMIT }))
    )
    yield* Layer.buildWithScope(
      options.exported === true
        ? lean.pipe(Layer.provide(Layer.succeed(Tracer.Tracer)(recordingTracer().tracer)))
        : lean,
      scope
    )
    return { port: (server.address() as AddressInfo).port, scope, started, interrupted }
  })

/** Who answered: "lean" (the stand-in's observation or a lean 4xx), "routed", or the raw status line. */
const answeredBy = (answer: string) =>
  answer.includes("routed")
    ? "routed"
    : answer.startsWith("HTTP/1.1 200") || answer.includes("detail")
    ? "lean"
    : answer

describe("which requests the lean handler takes", () => {
  it.live("only a keyed, plain POST /execute_action with a body within the limit", () =>
    Effect.gen(function*() {
      const { port } = yield* frontedServer()
      const action = `{"action":{"action":"run","args":{"command":"x"}}}`
      const taken = (head: string, body = action) => Effect.map(raw(port, head, body), answeredBy)
      assert.strictEqual(yield* taken(post(action)), "lean")
      assert.strictEqual(yield* taken(post(action, { authorization: `Bearer ${KEY}` })), "lean")
      assert.strictEqual(yield* taken(post(`{"action":`), `{"action":`), "lean", "a bad body is the route's 400")
      assert.strictEqual(yield* taken(post(action, {})), "routed", "no key: the gate's 403")
      assert.strictEqual(yield* taken(post(action, { "x-session-api-key": "wrong" })), "routed")
      assert.strictEqual(yield* taken(post("x".repeat(LIMIT + 1)), "x".repeat(LIMIT + 1)), "routed", "413")
      assert.strictEqual(yield* taken(post(""), ""), "routed", "an empty body")
      assert.strictEqual(yield* taken(post(action).replace("POST", "PUT")), "routed", "405")
      assert.strictEqual(yield* taken(post(action).replace("/execute_action", "/execute_action?x=1")), "routed")
      assert.strictEqual(yield* taken(post(action).replace("/execute_action", "//execute_action")), "routed")
      const chunked = `POST /execute_action HTTP/1.1\r\nx-session-api-key: ${KEY}\r\ntransfer-encoding: chunked`
      assert.strictEqual(yield* taken(chunked, `${action.length.toString(16)}\r\n${action}\r\n0\r\n\r\n`), "routed")
      // A body cut short by a client that goes away leaves the server answering.
      const cut = connect(port, "127.0.0.1")
      cut.write(`${post(action)}\r\nhost: x\r\n\r\n${action.slice(0, 10)}`, () => cut.destroy())
      yield* Effect.callback<void>((resume) => void cut.on("close", () => resume(Effect.void)))
      assert.strictEqual(yield* taken(post(action)), "lean")
      // A plain `GET /alive`, and nothing else of /alive.
      const alive = (head: string, body = "") => Effect.map(raw(port, head, body), (answer) => answer.split("\r\n")[0])
      assert.strictEqual(yield* alive("GET /alive HTTP/1.1"), "HTTP/1.1 200 OK")
      assert.strictEqual(yield* alive("GET /alive?x=1 HTTP/1.1"), "HTTP/1.1 299 unknown")
      assert.strictEqual(yield* alive("HEAD /alive HTTP/1.1"), "HTTP/1.1 299 unknown")
      assert.strictEqual(yield* alive("GET /alive HTTP/1.1\r\ncontent-length: 2", "{}"), "HTTP/1.1 299 unknown")
    }).pipe(Effect.scoped))

  it.live("nothing while spans are exported: Effect's server records them", () =>
    Effect.gen(function*() {
      const { port } = yield* frontedServer({ exported: true })
      const action = `{"action":{"action":"run","args":{"command":"x"}}}`
      assert.strictEqual(answeredBy(yield* raw(port, post(action), action)), "routed")
    }).pipe(Effect.scoped))

  it.live("stopping the server interrupts an action in flight; so does the client going away", () =>
    Effect.gen(function*() {
      const action = `{"action":{"action":"run","args":{"command":"x"}}}`
      const stopped = yield* frontedServer({ hold: true })
      const answer = yield* Effect.forkChild(raw(stopped.port, post(action), action))
      yield* Deferred.await(stopped.started)
      yield* Scope.close(stopped.scope, Exit.void)
      yield* Deferred.await(stopped.interrupted)
      assert.match(yield* Fiber.join(answer), /^HTTP\/1\.1 503 /)

      const left = yield* frontedServer({ hold: true })
      const socket = connect(left.port, "127.0.0.1")
      socket.write(`${post(action)}\r\nhost: x\r\n\r\n${action}`)
      yield* Deferred.await(left.started)
      socket.destroy()
      yield* Deferred.await(left.interrupted)
    }).pipe(Effect.scoped))
})
