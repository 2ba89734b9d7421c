/**
 * The `modal` SDK's client for one layer or pool: its token pair read (missing, an
 * `InvalidOptionsError`), the SDK loaded when a layer is built (an optional peer dependency, never
 * loaded by the root entry), closed with the layer's scope.
 */
import { Effect, Redacted } from "effect"
import type { ModalClient } from "modal"
import { loadOptionalPeer } from "../../hosted/optionalPeer.ts"
import { credential } from "../../hosted/options.ts"
import { RuntimeStartError } from "../../schema/errors.ts"
import type { ModalRuntimeOptions } from "./options.ts"

/**
 * The SDK reads its server from its profile (`MODAL_SERVER_URL`, else ~/.modal.toml, else Modal's
 * API) when a client is constructed, and takes no URL of its own: a `serverUrl` is set in that
 * variable for the constructor's synchronous run only, then the variable is put back.
 */
const withServerUrl = <A>(serverUrl: string | undefined, make: () => A): A => {
  if (serverUrl === undefined) return make()
  const before = process.env["MODAL_SERVER_URL"]
  process.env["MODAL_SERVER_URL"] = serverUrl
  try {
    return make()
  } finally {
    if (before === undefined) delete process.env["MODAL_SERVER_URL"]
    else process.env["MODAL_SERVER_URL"] = before
  }
}

const TOKEN = "a Modal token: `modal token new`, or the dashboard's API tokens"

/** A client for one layer or pool (to `serverUrl`, else the SDK's profile's), closed with the scope. */
export const modalClient = Effect.fn("ModalRuntime.client")(function*(options: ModalRuntimeOptions) {
  const tokenId = yield* credential("ModalRuntime", options.tokenId, "tokenId", "MODAL_TOKEN_ID", TOKEN)
  const tokenSecret = yield* credential("ModalRuntime", options.tokenSecret, "tokenSecret", "MODAL_TOKEN_SECRET", TOKEN)
  const sdk = yield* loadOptionalPeer("ModalRuntime", "modal", "modal@^0.11", () => import("modal"))
  return yield* Effect.acquireRelease(
    Effect.try({
      try: (): ModalClient =>
        withServerUrl(options.serverUrl, () =>
          new sdk.ModalClient({
            tokenId: Redacted.value(tokenId),
            tokenSecret: Redacted.value(tokenSecret),
            ...(options.environment === undefined ? {} : { environment: options.environment })
          })),
      catch: (cause) => new RuntimeStartError({ message: `Modal: cannot make a client: ${(cause as Error).message}` })
    }),
    (client) => Effect.sync(() => client.close())
  )
})
