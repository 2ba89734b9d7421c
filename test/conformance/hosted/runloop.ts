/**
 * RunloopRuntime's hosted lifecycle target, for the stand-in and for Runloop itself: devboxes
 * listed through the SDK and picked by their session metadata (Runloop's list has no metadata
 * filter); a second layer with the session id attaches to a kept devbox; suspend keeps the disk,
 * not memory; the reaper judges owners of this host by pid.
 */
import { Runloop } from "@runloop/api-client"
import { Redacted } from "effect"
import { RunloopRuntime, type RunloopRuntimeOptions } from "../../../src/runloop.ts"
import { type CloudRuntime, cloudRuntime, type SharedOptions } from "./shared.ts"

/**
 * Where Runloop is: a stand-in's API URL, key and tunnel server (a port's tunnel at
 * `<tunnels>/<port>-<key>`), or nothing for Runloop itself (`RUNLOOP_API_KEY`); the blueprint.
 */
export interface RunloopArgs {
  readonly blueprint: string
  readonly standin?: { readonly baseUrl: string; readonly apiKey: string; readonly tunnels: string }
}

const options = (args: RunloopArgs): RunloopRuntimeOptions => {
  const standin = args.standin
  return {
    blueprint: args.blueprint,
    ...(standin === undefined ? {} : {
      apiKey: Redacted.make(standin.apiKey),
      baseUrl: standin.baseUrl,
      tunnelUrl: (port: number, key: string) => `${standin.tunnels}/${port}-${key}`
    })
  }
}

/** The runtime on Runloop with the suite's options. */
const layer = (args: RunloopArgs, shared: SharedOptions) => RunloopRuntime.layer({ ...options(args), ...shared })

/** Every state in which a devbox still holds something (Runloop keeps shut-down ones in its history). */
const HOLDING = ["provisioning", "initializing", "running", "suspending", "suspended", "resuming"] as const

/** The devboxes of the session that are not shut down. */
const sandboxes = async (args: RunloopArgs, sessionId: string) => {
  const standin = args.standin
  const api = new Runloop({
    maxRetries: 0,
    ...(standin === undefined ? {} : { bearerToken: standin.apiKey, baseURL: standin.baseUrl })
  })
  const ids: Array<string> = []
  for (const status of HOLDING) {
    for await (const devbox of api.devboxes.list({ status, limit: 100 })) {
      if (devbox.metadata["effect-sandbox.session"] === sessionId) ids.push(devbox.id)
    }
  }
  return ids
}

const runtime: CloudRuntime<RunloopArgs> = {
  name: "RunloopRuntime",
  module: import.meta.filename,
  layer,
  attach: (args, sessionId) => RunloopRuntime.attach(sessionId, options(args)),
  sandboxes,
  pause: { memorySurvives: false }
}

/** The owner process builds `lifecycleLayer`; the test files take `runloopLifecycle`. */
export const { lifecycle: runloopLifecycle, lifecycleLayer } = cloudRuntime(runtime)
