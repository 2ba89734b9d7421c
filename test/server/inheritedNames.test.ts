/**
 * Names every JavaScript object inherits (`__proto__`, `toString`, ...) are not action or
 * observation types, nor fields: looked up as own properties only, they get a 400 that names
 * them (they gave an empty 500), and as unknown fields they are ignored.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { decodeObservation } from "../../src/schema/wire.ts"
import { assertDetail, json, postJson, run, runAction, serverLayer, TestServer } from "./helpers.ts"

const INHERITED = [
  "__proto__",
  "constructor",
  "toString",
  "toLocaleString",
  "valueOf",
  "hasOwnProperty",
  "isPrototypeOf",
  "propertyIsEnumerable",
  "__defineGetter__",
  "__lookupGetter__"
] as const

/** `{"<name>": value}` with `name` as an own key, as JSON.parse would build it (`__proto__` included). */
const ownKey = (name: string, value: unknown) => JSON.parse(`{${JSON.stringify(name)}: ${JSON.stringify(value)}}`)

describe("inherited names", () => {
  layer(serverLayer(), { excludeTestServices: true })("over HTTP", (it) => {
    it.effect("as an action type: 400 naming the type, on both action endpoints", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        for (const name of INHERITED) {
          for (const path of ["/execute_action", "/v1/execute_action/stream"]) {
            const reply = yield* postJson(server, path, { action: { action: name, args: { command: "echo hi" } } })
            assertDetail(reply, 400, `Unknown action type "${name}". Known types: run, run_ipython,`)
          }
        }
        // The server is still fine.
        assert.strictEqual((yield* run(server, "echo still-here")).content, "still-here")
      }))

    it.effect("as argument names: ignored like any unknown field", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        for (const name of INHERITED) {
          const action = runAction(`echo ran-${name}`)
          const args = { ...ownKey(name, 1), ...action.action.args }
          const reply = yield* postJson(server, "/execute_action", { action: { action: "run", args } })
          assert.strictEqual(reply.status, 200, `${name}: ${reply.text}`)
          assert.strictEqual(json(reply).content, `ran-${name}`)
        }
      }))
    it.effect("as an MCP tool name or an environment variable name: an answer, never a 500", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        for (const name of INHERITED) {
          const call = yield* postJson(server, "/execute_action", {
            action: { action: "call_tool_mcp", args: { name, arguments: {} } }
          })
          assert.strictEqual(call.status, 200, `${name}: ${call.text}`)
          assert.strictEqual(json(call).observation, "error", `${name}: ${call.text}`)
          const env = yield* postJson(server, "/v1/env", { vars: ownKey(name, `value-of-${name}`) })
          assert.strictEqual(env.status, 200, `${name}: ${env.text}`)
          const echoed = yield* run(server, `echo "$${name.toUpperCase()}"`)
          assert.strictEqual(echoed.content, `value-of-${name}`)
        }
      }))

    it.effect("as an observation type or extra: a WireDecodeError naming the type, or ignored", () =>
      Effect.gen(function*() {
        for (const name of INHERITED) {
          const exit = yield* Effect.exit(decodeObservation({ observation: name, content: "x", extras: {} }))
          assert.isTrue(Exit.isFailure(exit), name)
          assert.include(String(Exit.isFailure(exit) ? exit.cause : ""), `Unsupported observation type "${name}"`)
          const ok = yield* decodeObservation({
            observation: "error",
            content: "boom",
            extras: { ...ownKey(name, 1), error_id: "" }
          })
          assert.strictEqual(ok._tag, "ErrorObservation", name)
        }
      }))
  })
})
