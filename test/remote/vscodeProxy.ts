/**
 * What VS Code through the runtime API's proxy must do, whatever the provisioner behind it: the
 * URL RemoteRuntime reports is OpenHands' path-mode `vscode_url` with the action server's token;
 * the token is exchanged for a cookie scoped to the runtime's path; a WebSocket handshake with
 * the cookie is answered by code-server through the proxy; without the token, a request and an
 * upgrade are refused (403) by the sandbox. Shared by vscode.test.ts (Docker) and
 * kubernetesApi.test.ts (the Kubernetes stand-in).
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { createHash, randomBytes, randomUUID } from "node:crypto"
import { type IncomingHttpHeaders, request } from "node:http"
import { DockerEngine, ImageBuilder } from "../../src/docker.ts"
import { toolsImage } from "../docker/infra.ts"

/**
 * The tools image's runtime image for uid 1000 `openhands` (the providers' tests build the same one). The
 * server it runs is given as a `command`, so it runs as the image's user whatever the image's uid.
 */
export const toolsRuntimeImage = Effect.gen(function*() {
  return yield* (yield* ImageBuilder).ensure({ baseImage: toolsImage(), userId: 1000, username: "openhands" })
}).pipe(Effect.provide(ImageBuilder.layer), Effect.provide(DockerEngine.layer), Effect.orDie)

/** RFC 6455's answer to `key`: a 101 carrying it came from a WebSocket server that read this handshake. */
const acceptOf = (key: string) =>
  createHash("sha1").update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest("base64")

/** A WebSocket handshake at `path` of the API server, as a browser sends it: the status, and whether a 101 answered this key. */
export const upgrade = (base: string, path: string, headers: Record<string, string> = {}) =>
  Effect.promise(() =>
    new Promise<{ status: number; accepted: boolean; headers: IncomingHttpHeaders }>((resolve, reject) => {
      const key = randomBytes(16).toString("base64")
      const { hostname, port } = new URL(base)
      const sent = request({
        hostname,
        port,
        path,
        headers: {
          Connection: "Upgrade",
          Upgrade: "websocket",
          "Sec-WebSocket-Version": "13",
          "Sec-WebSocket-Key": key,
          ...headers
        }
      })
      sent.on("upgrade", (answer, socket) => {
        socket.destroy()
        resolve({
          status: 101,
          accepted: answer.headers["sec-websocket-accept"] === acceptOf(key),
          headers: answer.headers
        })
      })
      sent.on("response", (answer) => {
        answer.resume()
        resolve({ status: answer.statusCode ?? 0, accepted: false, headers: answer.headers })
      })
      sent.on("error", reject)
      sent.end()
    })
  )

/** A path of VS Code's remote connection (what the workbench opens a WebSocket to) under the runtime's prefix. */
export const idePath = (runtimeId: string) =>
  `/${runtimeId}/vscode/?reconnectionToken=${randomUUID()}&reconnection=false&skipWebSocketFrames=false`

/** The checks above for the runtime `runtimeId` whose `info.urls.vscode` is `url`; the token. */
export const expectProxiedVsCode = (input: {
  readonly base: string
  readonly runtimeId: string
  readonly sessionKey: string
  readonly apiKey: string
  readonly url: string | undefined
}) =>
  Effect.gen(function*() {
    const { base, runtimeId, sessionKey } = input
    // OpenHands' client: the token from the action server (session key), the path-mode URL.
    const answer = yield* Effect.promise(() =>
      fetch(`${base}/${runtimeId}/vscode/connection_token`, { headers: { "X-Session-API-Key": sessionKey } })
    )
    const { token } = (yield* Effect.promise(() => answer.json())) as { token: string }
    assert.strictEqual(input.url, `${base}/${runtimeId}/vscode?tkn=${token}&folder=%2Fworkspace`)

    // The token is exchanged for a cookie scoped to this runtime's path; the redirect stays under it.
    const redirect = yield* Effect.promise(() => fetch(input.url!, { redirect: "manual" }))
    assert.strictEqual(redirect.status, 302)
    assert.strictEqual(redirect.headers.get("location"), `/${runtimeId}/vscode/?folder=%2Fworkspace`)
    assert.include(redirect.headers.get("set-cookie") ?? "", `vscode-tkn=${token}; Path=/${runtimeId}/vscode;`)

    // A WebSocket through the proxy reaches code-server with the cookie; without it the sandbox refuses it.
    const withCookie = yield* upgrade(base, idePath(runtimeId), { Cookie: `vscode-tkn=${token}` })
    assert.deepStrictEqual({ status: withCookie.status, accepted: withCookie.accepted }, {
      status: 101,
      accepted: true
    })
    const withoutCookie = yield* upgrade(base, idePath(runtimeId), {
      "X-Session-API-Key": sessionKey,
      "X-API-Key": input.apiKey
    })
    assert.strictEqual(withoutCookie.status, 403)
    const withoutToken = yield* Effect.promise(() =>
      fetch(`${base}/${runtimeId}/vscode/?folder=/workspace`, { headers: { "X-Session-API-Key": sessionKey } })
    )
    assert.strictEqual(withoutToken.status, 403)
    return token
  })
