/**
 * What the E2B stand-in makes on the Docker engine: every sandbox container carries the label
 * `effect-sandbox.e2b-standin=<instance>`, so `close()` (and a test's leftover check) finds all of
 * them and nothing else.
 */
import Docker from "dockerode"

export const docker = new Docker()

export const STANDIN_LABEL = "effect-sandbox.e2b-standin"

/** Ids of the containers of `instance` (of every instance when omitted). */
export const leftovers = async (instance?: string): Promise<Array<string>> => {
  const filters = JSON.stringify({ label: [instance === undefined ? STANDIN_LABEL : `${STANDIN_LABEL}=${instance}`] })
  return (await docker.listContainers({ all: true, filters })).map((c) => c.Id)
}

/** Remove a container whatever its state (a paused one is unpaused by the engine's forced removal). */
export const removeContainer = (id: string) => docker.getContainer(id).remove({ force: true, v: true }).catch(() => {})
