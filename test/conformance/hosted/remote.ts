/**
 * RemoteRuntime's hosted lifecycle target, through the runtime API on the Docker engine
 * (test/remote/apiServer.ts): the API's containers found by their session label; a kept runtime is
 * paused on release and a second layer with the session id resumes it; pause is `docker pause`
 * (memory kept). No reaper case: RemoteRuntime has none, the runtime API ends the runtimes it holds.
 * A dying server's exit code and last output reach RemoteRuntime as the API's `restart_reasons` and
 * `last_output`.
 */
import { apiServerLayer, sessionContainers } from "../../remote/apiServer.ts"
import { cloudRuntime, type SharedOptions } from "./shared.ts"

/** Where the runtime API is, and its key. */
export interface RemoteArgs {
  readonly apiUrl: string
  readonly key: string
}

/** The runtime on the API with the suite's options. */
const layer = (args: RemoteArgs, { sessionId, ...shared }: SharedOptions) =>
  apiServerLayer(args.apiUrl, args.key, sessionId, shared)

export const { lifecycle: remoteLifecycle } = cloudRuntime<RemoteArgs>({
  name: "RemoteRuntime",
  layer,
  sandboxes: async (_args, sessionId) => sessionContainers(sessionId),
  pause: { memorySurvives: true }
})
