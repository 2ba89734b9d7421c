/**
 * E2BRuntime's hosted lifecycle target, for the stand-in and for E2B itself: sandboxes listed
 * through the SDK by their session metadata; a second layer with the session id attaches to a kept
 * sandbox; E2B's pause keeps memory; the reaper judges owners of this host by their pid.
 */
import { Sandbox } from "e2b"
import { Redacted } from "effect"
import { E2BRuntime, type E2BRuntimeOptions } from "../../../src/e2b.ts"
import { type CloudRuntime, cloudRuntime, type SharedOptions } from "./shared.ts"

/**
 * Where E2B is: a stand-in's URL and key (the hosts of its sandboxes' ports under `<url>/.hosts/`),
 * or nothing for E2B itself (`E2B_API_KEY`); the template.
 */
export interface E2BArgs {
  readonly template: string
  readonly standin?: { readonly url: string; readonly apiKey: string }
}

const options = (args: E2BArgs): E2BRuntimeOptions => {
  const standin = args.standin
  return {
    template: args.template,
    ...(standin === undefined ? {} : {
      apiKey: Redacted.make(standin.apiKey),
      apiUrl: standin.url,
      sandboxUrl: standin.url,
      hostUrl: (host: string) => `${standin.url}/.hosts/${host}`
    })
  }
}

/** The runtime on E2B with the suite's options. */
const layer = (args: E2BArgs, shared: SharedOptions) => E2BRuntime.layer({ ...options(args), ...shared })

/** The sandboxes E2B lists with the session's metadata, running or paused. */
const sandboxes = async (args: E2BArgs, sessionId: string) => {
  const standin = args.standin
  const paginator = Sandbox.list({
    ...(standin === undefined ? {} : { apiKey: standin.apiKey, apiUrl: standin.url, sandboxUrl: standin.url }),
    query: { metadata: { "effect-sandbox.session": sessionId } }
  })
  const ids: Array<string> = []
  while (paginator.hasNext) ids.push(...(await paginator.nextItems()).map((listed) => listed.sandboxId))
  return ids
}

const runtime: CloudRuntime<E2BArgs> = {
  name: "E2BRuntime",
  module: import.meta.filename,
  layer,
  attach: (args, sessionId) => E2BRuntime.attach(sessionId, options(args)),
  sandboxes,
  pause: { memorySurvives: true }
}

/** The owner process builds `lifecycleLayer`; the test files take `e2bLifecycle`. */
export const { lifecycle: e2bLifecycle, lifecycleLayer } = cloudRuntime(runtime)
