/**
 * ModalRuntime's hosted lifecycle target, for the stand-in and for Modal itself: a session's
 * sandbox looked up through the SDK by its name; a second layer with the session id attaches to a kept
 * sandbox; no pause (Modal cannot freeze a sandbox); the reaper judges owners of this host by pid.
 */
import { Redacted } from "effect"
import { ModalClient } from "modal"
import { getCACertificates, setDefaultCACertificates } from "node:tls"
import { ModalRuntime, type ModalRuntimeOptions } from "../../../src/modal.ts"
import { sessionSandboxName } from "../../../src/providers/modal/driver.ts"
import { type CloudRuntime, cloudRuntime, type SharedOptions } from "./shared.ts"

/**
 * Where Modal is: a stand-in's URL, token pair and tunnels' certificate (PEM, which an owner
 * process must trust as the test's does), or nothing for Modal itself (`MODAL_TOKEN_*`); the image.
 */
export interface ModalArgs {
  readonly image: string
  readonly standin?: {
    readonly url: string
    readonly tokenId: string
    readonly tokenSecret: string
    readonly certificate: string
  }
}

/** The app ModalRuntime puts its sandboxes in by default. */
const APP = "effect-sandbox"

const options = (args: ModalArgs): ModalRuntimeOptions => {
  const standin = args.standin
  const trusted = getCACertificates("default")
  if (standin !== undefined && !trusted.includes(standin.certificate)) {
    setDefaultCACertificates([...trusted, standin.certificate])
  }
  return {
    image: args.image,
    ...(standin === undefined ? {} : {
      tokenId: Redacted.make(standin.tokenId),
      tokenSecret: Redacted.make(standin.tokenSecret),
      serverUrl: standin.url
    })
  }
}

/** The runtime on Modal with the suite's options. */
const layer = (args: ModalArgs, shared: SharedOptions) => ModalRuntime.layer({ ...options(args), ...shared })

/**
 * A client of the SDK for `args` (it reads its server from `MODAL_SERVER_URL` when constructed, and
 * takes no URL option).
 */
const clientOf = (args: ModalArgs) => {
  const standin = args.standin
  if (standin === undefined) return new ModalClient()
  const before = process.env["MODAL_SERVER_URL"]
  process.env["MODAL_SERVER_URL"] = standin.url
  try {
    return new ModalClient({ tokenId: standin.tokenId, tokenSecret: standin.tokenSecret })
  } finally {
    if (before === undefined) delete process.env["MODAL_SERVER_URL"]
    else process.env["MODAL_SERVER_URL"] = before
  }
}

/** One client per process, made on the first listing. */
let client: ModalClient | undefined

/**
 * The session's running sandbox, looked up by the name ModalRuntime gives it (`list()` may not
 * return V2 sandboxes; the stand-in's does not).
 */
const sandboxes = async (args: ModalArgs, sessionId: string) => {
  client ??= clientOf(args)
  const found = await client.sandboxes.fromName(APP, sessionSandboxName(sessionId)).catch((error: unknown) => {
    if ((error as { name?: string }).name === "NotFoundError") return undefined
    throw error
  })
  return found === undefined || (await found.poll()) !== null ? [] : [found.sandboxId]
}

const runtime: CloudRuntime<ModalArgs> = {
  name: "ModalRuntime",
  module: import.meta.filename,
  layer,
  attach: (args, sessionId) => ModalRuntime.attach(sessionId, options(args)),
  sandboxes
}

/** The owner process builds `lifecycleLayer`; the test files take `modalLifecycle`. */
export const { lifecycle: modalLifecycle, lifecycleLayer } = cloudRuntime(runtime)
