/**
 * DaytonaRuntime's hosted lifecycle target, for the stand-in and for Daytona itself: sandboxes
 * listed through the SDK by their session label; a second layer with the session id attaches to a
 * kept sandbox; Daytona's pause keeps memory; the reaper judges owners by the hosted owner tags.
 */
import { Daytona } from "@daytonaio/sdk"
import { Redacted } from "effect"
import { DaytonaRuntime, type DaytonaRuntimeOptions } from "../../../src/daytona.ts"
import { listSandboxes } from "../../../src/providers/daytona/listing.ts"
import { type CloudRuntime, cloudRuntime, type SharedOptions } from "./shared.ts"

/** Where Daytona is: a stand-in's API URL and key, or nothing for Daytona itself (`DAYTONA_*`); the snapshot. */
export interface DaytonaArgs {
  readonly snapshot?: string
  readonly standin?: { readonly apiUrl: string; readonly apiKey: string }
}

const options = (args: DaytonaArgs): DaytonaRuntimeOptions => {
  const standin = args.standin
  return {
    ...(args.snapshot === undefined ? {} : { snapshot: args.snapshot }),
    ...(standin === undefined ? {} : { apiKey: Redacted.make(standin.apiKey), apiUrl: standin.apiUrl })
  }
}

/** The runtime on Daytona with the suite's options. */
const layer = (args: DaytonaArgs, shared: SharedOptions) => DaytonaRuntime.layer({ ...options(args), ...shared })

/** The sandboxes of the session Daytona lists, but those destroyed. */
const sandboxes = async (args: DaytonaArgs, sessionId: string) => {
  const standin = args.standin
  const client = new Daytona(standin === undefined ? {} : { apiKey: standin.apiKey, apiUrl: standin.apiUrl })
  const listed = await listSandboxes(client, { "effect-sandbox.session": sessionId })
  return listed.filter((sandbox) => sandbox.state !== "destroyed").map((sandbox) => sandbox.id)
}

const runtime: CloudRuntime<DaytonaArgs> = {
  name: "DaytonaRuntime",
  module: import.meta.filename,
  layer,
  attach: (args, sessionId) => DaytonaRuntime.attach(sessionId, options(args)),
  sandboxes,
  pause: { memorySurvives: true }
}

/** The owner process builds `lifecycleLayer`; the test files take `daytonaLifecycle`. */
export const { lifecycle: daytonaLifecycle, lifecycleLayer } = cloudRuntime(runtime)
