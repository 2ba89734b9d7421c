/**
 * What the stand-in makes on the Docker engine: every container and volume
 * carries the label `effect-sandbox.k8s-standin=<instance>`, so `close()` (and a
 * test's leftover check) finds all of them and nothing else.
 */
import Docker from "dockerode"

export const docker = new Docker()

const STANDIN_LABEL = "effect-sandbox.k8s-standin"

/** Docker names are `[a-zA-Z0-9][a-zA-Z0-9_.-]+`: Kubernetes names already fit. */
export const dockerName = (instance: string, ...parts: Array<string>) => ["k8s-standin", instance, ...parts].join("-")

export const labelsOf = (instance: string, extra: Record<string, string> = {}) => ({
  [STANDIN_LABEL]: instance,
  ...extra
})

/** Ids of the containers and names of the volumes of `instance` (all instances when omitted). */
export const leftovers = async (instance?: string) => {
  const filters = JSON.stringify({ label: [instance === undefined ? STANDIN_LABEL : `${STANDIN_LABEL}=${instance}`] })
  const containers = await docker.listContainers({ all: true, filters })
  const volumes = (await docker.listVolumes({ filters })).Volumes ?? []
  return { containers: containers.map((c) => c.Id), volumes: volumes.map((v) => v.Name) }
}

/** Remove every container, then every volume, of `instance`. */
export const removeAll = async (instance: string) => {
  const found = await leftovers(instance)
  await Promise.all(
    found.containers.map((id) => docker.getContainer(id).remove({ force: true, v: true }).catch(() => {}))
  )
  await Promise.all(found.volumes.map((name) => docker.getVolume(name).remove().catch(() => {})))
}

const units: Record<string, number> = {
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40
}

/** A resource quantity ("512Mi", "1G", "500m", "2") as a number; undefined when absent. */
export const quantity = (value: string | number | undefined): number | undefined => {
  if (value === undefined) return undefined
  if (typeof value === "number") return value
  const match = /^(\d+(?:\.\d+)?(?:e\d+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(value)
  if (match === null) return undefined
  const number = Number(match[1])
  return match[2] === "m" ? number / 1000 : number * units[match[2] ?? ""]!
}
