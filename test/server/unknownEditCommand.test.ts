/**
 * FileEditAction.command is a literal union, but an OpenHands client may send what its model
 * wrote: the server answers an unknown command with the editor's message, as OpenHands does,
 * not a 400 (the model reads it and corrects itself).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { json, postJson, serverLayer, TestServer } from "./helpers.ts"

const edit = (command: string) => ({
  action: { action: "edit", args: { path: "/workspace/a.txt", command, old_str: null, new_str: null } }
})

layer(serverLayer(), { excludeTestServices: true })("an edit with an unknown command", (it) => {
  it.effect("/execute_action: the editor's Unrecognized command observation", () =>
    Effect.gen(function*() {
      const reply = yield* postJson(yield* TestServer, "/execute_action", edit("delete"))
      assert.strictEqual(reply.status, 200, reply.text)
      const body = json(reply)
      assert.strictEqual(body.observation, "edit")
      assert.strictEqual(
        body.content,
        "ERROR:\nUnrecognized command delete. The allowed commands for the oh_editor tool are: view, create, str_replace, insert, undo_edit"
      )
      assert.strictEqual(body.extras.path, "/workspace/a.txt")
    }))

  it.effect("a known command still runs", () =>
    Effect.gen(function*() {
      const reply = yield* postJson(yield* TestServer, "/execute_action", edit("view"))
      assert.strictEqual(reply.status, 200, reply.text)
      assert.match(json(reply).content, /^ERROR:\nInvalid `path` parameter: \/workspace\/a.txt\. The path/)
    }))
})
