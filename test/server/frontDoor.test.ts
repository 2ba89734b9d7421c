/**
 * The front door (src/server/frontDoor.ts) holds what clients send before it opens and lets it on,
 * in order, once it does: the action server listens while its shell is still starting, and a request
 * that came then must be answered by the routes served later, not dropped for want of a listener.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { createServer, request } from "node:http"
import type { AddressInfo } from "node:net"
import { makeFrontDoor, openDoor, withFrontDoor } from "../../src/server/frontDoor.ts"
import { eventually } from "../eventually.ts"

/** A GET of `path` on `port`: its status and body once answered. */
const get = (port: number, path: string) =>
  new Promise<string>((resolve, reject) => {
    request({ host: "127.0.0.1", port, path, agent: false }, (response) => {
      let body = ""
      response.setEncoding("utf8").on("data", (chunk: string) => body += chunk)
      response.on("end", () => resolve(`${response.statusCode} ${body}`))
    }).on("error", reject).end()
  })

describe("the front door", () => {
  it.live("holds requests until it opens, then lets them on in order to listeners added meanwhile", () =>
    Effect.gen(function*() {
      const door = makeFrontDoor()
      const server = withFrontDoor(createServer(), door)
      yield* Effect.addFinalizer(() => Effect.sync(() => server.close()))
      yield* Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve)))
      const port = (server.address() as AddressInfo).port
      const answers: Array<string> = []
      const first = get(port, "/first").then((answer) => answers.push(answer))
      const second = get(port, "/second").then((answer) => answers.push(answer))
      // Both are held: nothing listens for requests yet, and nothing is answered.
      yield* eventually("both requests held", () => door.held?.length === 2, 5_000, 5)
      assert.deepStrictEqual(answers, [])
      const seen: Array<string> = []
      server.on("request", (incoming, response) => {
        seen.push(incoming.url!)
        response.end(`answered ${incoming.url}`)
      })
      door.handler = (incoming, response) => {
        if (incoming.url !== "/second") return false
        response.writeHead(299).end("taken")
        return true
      }
      openDoor(door)
      yield* Effect.promise(() => Promise.all([first, second]))
      assert.deepStrictEqual([...answers].sort(), ["200 answered /first", "299 taken"])
      assert.deepStrictEqual(seen, ["/first"])
      assert.strictEqual(door.held, undefined)
      // Once open, a request goes straight on.
      assert.strictEqual(yield* Effect.promise(() => get(port, "/third")), "200 answered /third")
    }).pipe(Effect.scoped))
})
