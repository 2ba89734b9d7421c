/**
 * What VS Code through the runtime API's proxy must do, whatever the provisioner behind it: the
 * URL RemoteRuntime reports is OpenHands' path-mode `vscode_url` with the action server's token,
 * an entry that sends whoever holds the token to the IDE's own host
 * (`<runtime_id>-<mac>.localhost`); there the token is exchanged for a cookie; a WebSocket
 * handshake with the cookie from the IDE's own origin is answered by code-server through the
 * proxy; without the token, or from another origin, a request and an upgrade are refused (403).
 * Shared by vscode.test.ts (Docker) and kubernetesApi.test.ts (the Kubernetes stand-in).
 */
import { assert } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import { DockerEngine, ImageBuilder } from "../../src/docker.ts"
import { ideHostLabel } from "../../src/runtimeApi/vscodeHosts.ts"
import { tokenCookieName } from "../../src/server/vscode/ideOrigin.ts"
import { toolsImage } from "../docker/infra.ts"
import { ideRequest } from "../vscode/ideHttp.ts"

/**
 * The tools image's runtime image for uid 1000 `openhands` (the providers' tests build the same one). The
 * server it runs is given as a `command`, so it runs as the image's user whatever the image's uid.
 */
export const toolsRuntimeImage = Effect.gen(function*() {
  return yield* (yield* ImageBuilder).ensure({ baseImage: toolsImage(), userId: 1000, username: "openhands" })
}).pipe(Effect.provide(ImageBuilder.layer), Effect.provide(DockerEngine.layer), Effect.orDie)

/** A WebSocket handshake at `path` of `base` (the API, or an IDE host), as a browser sends it. */
export const upgrade = (base: string, path: string, headers: Record<string, string> = {}) =>
  Effect.promise(() => ideRequest(`${base}${path}`, { headers, upgrade: true }))

/** A path of VS Code's remote connection (what the workbench opens a WebSocket to), under `prefix`. */
export const idePath = (prefix = "") =>
  `${prefix}/?reconnectionToken=${randomUUID()}&reconnection=false&skipWebSocketFrames=false`

/**
 * The checks above for the runtime `runtimeId` whose `info.urls.vscode` is `url`: the path-mode
 * entry sends the token's holder to the IDE's own host and nothing else; there, the token becomes
 * a host-only cookie named for it, a WebSocket with it reaches code-server from the IDE's own page
 * only, and a host whose mac is not the runtime's reaches nothing. The token and the IDE's origin.
 */
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

    // The entry: with the token, a redirect to the IDE's host (no cookie on the API's origin); else 403.
    const ide = `http://${ideHostLabel(runtimeId, Redacted.make(sessionKey))}.localhost:${new URL(base).port}`
    const entry = yield* Effect.promise(() => ideRequest(input.url!))
    assert.deepStrictEqual([entry.status, entry.headers.location, entry.headers["set-cookie"]], [
      302,
      `${ide}/?tkn=${token}&folder=%2Fworkspace`,
      undefined
    ])
    const invalid = { detail: "Invalid VS Code connection token" }
    for (
      const path of [`/${runtimeId}/vscode?folder=/workspace`, `/${runtimeId}/vscode/?tkn=${token.toUpperCase()}`]
    ) {
      const refused = yield* Effect.promise(() =>
        ideRequest(`${base}${path}`, { headers: { "X-Session-API-Key": sessionKey, "X-API-Key": input.apiKey } })
      )
      assert.deepStrictEqual([refused.status, JSON.parse(refused.body)], [403, invalid], path)
    }
    const entryUpgrade = yield* upgrade(base, idePath(`/${runtimeId}/vscode`), {
      Cookie: `${tokenCookieName(token)}=${token}`
    })
    assert.strictEqual(entryUpgrade.status, 403, "no WebSocket on the API's origin")

    // On the IDE's host, the sandbox exchanges the token for its cookie.
    const redirect = yield* Effect.promise(() => ideRequest(entry.headers.location!))
    assert.strictEqual(redirect.status, 302)
    assert.strictEqual(redirect.headers.location, "/?folder=%2Fworkspace")
    const cookie = `${tokenCookieName(token)}=${token}`
    assert.deepStrictEqual(redirect.headers["set-cookie"], [`${cookie}; Path=/; HttpOnly; SameSite=Lax`])

    // A WebSocket reaches code-server with the cookie from the IDE's own page; without the cookie,
    // from another origin's page, or at a host whose mac is not the runtime's, it does not.
    const own = yield* upgrade(ide, idePath(), { Cookie: cookie, Origin: ide })
    assert.deepStrictEqual({ status: own.status, accepted: own.accepted }, { status: 101, accepted: true })
    const withoutCookie = yield* upgrade(ide, idePath(), {
      Origin: ide,
      "X-Session-API-Key": sessionKey,
      "X-API-Key": input.apiKey
    })
    assert.strictEqual(withoutCookie.status, 403)
    for (const origin of [base, ide.replace(`:${new URL(ide).port}`, ":1")]) {
      const foreign = yield* upgrade(ide, idePath(), { Cookie: cookie, Origin: origin })
      assert.strictEqual(foreign.status, 403, origin)
    }
    const forged = ide.replace(/-[0-9a-f]{32}\./, `-${"0".repeat(32)}.`)
    const elsewhere = yield* upgrade(forged, idePath(), { Cookie: cookie, Origin: forged })
    assert.deepStrictEqual([elsewhere.status, JSON.parse(elsewhere.body)], [404, {
      detail: `Runtime ${runtimeId} not found`
    }])
    return { token, ide }
  })
