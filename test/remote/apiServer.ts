/**
 * The runtime API server for the tests: scripts/runtimeApiProcess.ts's process and §14 client,
 * with the tests' container name prefix and base image, and the readiness wait and action call a
 * client written from §14 alone makes.
 */
import { Redacted, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import {
  type ApiServer,
  call,
  removeContainersNamed,
  startApiServer as launch
} from "../../scripts/runtimeApiProcess.ts"
import { RemoteRuntime, type RemoteRuntimeOptions } from "../../src/remote.ts"
import { baseImage, containersWithLabel } from "../docker/infra.ts"

export { type Answer, type ApiServer, call, type Started } from "../../scripts/runtimeApiProcess.ts"

/**
 * Every container a test file makes is named `<PREFIX>-<session>`: a failed run is cleaned up by
 * name. One prefix per file (this module is loaded once per test file): the files of a group run
 * side by side, and one file's clean-up must not remove another's running sandboxes.
 */
export const PREFIX = `rapi-test-${randomBytes(3).toString("hex")}`

/** A session id unique to one test. */
export const newSessionId = () => `rapi-${randomBytes(5).toString("hex")}`

/** Start the API server with `args`, `EFFECT_SANDBOX_API_KEY=key` and `env`; resolves once it listens. */
export const startApiServer = (
  args: ReadonlyArray<string>,
  key: string,
  env: Readonly<Record<string, string>> = {}
): Promise<ApiServer> =>
  launch(["--container-name-prefix", PREFIX, ...args], {
    EFFECT_SANDBOX_API_KEY: key,
    SANDBOX_BASE_CONTAINER_IMAGE: baseImage(),
    ...env
  })

/** RemoteRuntime on the API server at `base` for `sessionId`, its image built from the base image, polling fast. */
export const apiServerLayer = (
  base: string,
  key: string,
  sessionId: string,
  more: Partial<RemoteRuntimeOptions> = {}
) =>
  RemoteRuntime.layer({
    apiUrl: base,
    apiKey: Redacted.make(key),
    sessionId,
    baseImage: baseImage(),
    schedules: { podStatus: Schedule.spaced("250 millis"), buildStatus: Schedule.spaced("500 millis") },
    ...more
  })

/** Poll `/runtime/{id}` every 250 ms until `pod_status` is `ready` (as OpenHands' `_wait_until_alive`). */
export const waitReady = async (base: string, key: string, runtimeId: string) => {
  for (let attempt = 0; attempt < 240; attempt++) {
    const { body } = await call(base, "GET", `/runtime/${runtimeId}`, { key })
    if (body["pod_status"] === "ready") return body
    if (body["pod_status"] === "failed") throw new Error(`runtime failed: ${JSON.stringify(body)}`)
    await new Promise((done) => setTimeout(done, 250))
  }
  throw new Error(`runtime ${runtimeId} never became ready`)
}

/** `POST <url>/execute_action` of a `run` action, with the sandbox's `X-Session-API-Key`; the observation. */
export const run = async (url: string, sessionKey: string, command: string) => {
  const response = await fetch(`${url}/execute_action`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Session-API-Key": sessionKey },
    body: JSON.stringify({ action: { action: "run", args: { command } } }),
    signal: AbortSignal.timeout(60_000)
  })
  return { status: response.status, body: await response.json() as Record<string, unknown> }
}

/** Containers (running or not) of a session. */
export const sessionContainers = (sessionId: string) => containersWithLabel(`effect-sandbox.session=${sessionId}`)

/** Remove whatever a failed test left: every container named `<PREFIX>-...`. */
export const removeLeftovers = () => removeContainersNamed(PREFIX)

/**
 * The API servers of one test file, all with `key`: `start` one, and `stopAll` (after each test)
 * kills them and removes every container the file's sandboxes left.
 */
export const apiServers = (key: string) => {
  const servers: Array<ApiServer> = []
  return {
    start: async (args: ReadonlyArray<string> = []) => {
      const server = await startApiServer(args, key)
      servers.push(server)
      return server
    },
    stopAll: async () => {
      for (const server of servers.splice(0)) await server.kill()
      removeLeftovers()
    }
  }
}
