/**
 * RemoteRuntime against the real runtime API server (`effect-sandbox-runtime-api` on the Docker
 * engine, test/remote/apiServer.ts), both written from spec §14 alone: the image named under the
 * API's registry prefix and built through `/build` from our context, `/start`, the pod wait, a
 * command run through the API's URL, a kept-alive runtime paused on release and resumed by the next runtime of the session, then
 * stopped: no container of the session is left.
 */
import { afterEach, assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { dockerCli } from "../docker/helpers.ts"
import { describeDocker } from "../docker/infra.ts"
import {
  type ApiServer,
  apiServerLayer,
  newSessionId,
  removeLeftovers,
  sessionContainers,
  startApiServer
} from "./apiServer.ts"
import { echo, keptAlive } from "./helpers.ts"

const KEY = randomBytes(16).toString("hex")
const servers: Array<ApiServer> = []

/** The session's containers' states (`docker inspect`'s Status), sorted. */
const states = (sessionId: string) =>
  sessionContainers(sessionId).map((id) => dockerCli("inspect", "-f", "{{.State.Status}}", id).stdout.trim()).sort()

describeDocker("RemoteRuntime against effect-sandbox-runtime-api", () => {
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.kill()
    removeLeftovers()
  })

  it.live(
    "builds through /build, runs a command, pauses on release, resumes for the session, then stops",
    () =>
      Effect.gen(function*() {
        const server = yield* Effect.promise(() => startApiServer([], KEY))
        servers.push(server)
        const sid = newSessionId()

        const first = yield* echo.pipe(
          Effect.provide(apiServerLayer(server.base, KEY, sid, { sandbox: keptAlive }))
        )
        assert.deepStrictEqual({ content: first.content, exitCode: first.exitCode }, {
          content: "remote-42",
          exitCode: 0
        })
        assert.strictEqual(first.info.kind, "remote")
        assert.deepStrictEqual(states(sid), ["paused"])

        const second = yield* echo.pipe(Effect.provide(apiServerLayer(server.base, KEY, sid)))
        assert.strictEqual(second.content, "remote-42")
        assert.strictEqual(second.info.urls["actionServer"], first.info.urls["actionServer"])
        for (let attempt = 0; attempt < 40 && states(sid).length > 0; attempt++) yield* Effect.sleep("250 millis")
        assert.deepStrictEqual(states(sid), [])
      }),
    600_000
  )
})
