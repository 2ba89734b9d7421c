/**
 * OpenHands' `sandbox.volumes`: `host:container[:mode],...` (mode `rw` by
 * default). An absolute host path is a bind mount; a bare name (or
 * `volume:<name>`) is a named Docker volume. `SandboxConfig` refuses any other
 * form, with the same parser, so a config that decoded always mounts.
 */
import { resolve } from "node:path"
import { volumeEntries } from "../../schema/SandboxConfig.ts"

export const parseVolumes = (spec: string | null | undefined): Array<string> => {
  const entries = volumeEntries(spec ?? "")
  if (entries === undefined) throw new Error(`Invalid volumes "${spec}": expected host:container[:ro|rw],...`)
  return entries.map(({ container, host, mode, named }) => `${named ? host : resolve(host)}:${container}:${mode}`)
}
