/**
 * OpenHands' `sandbox.volumes`: `host:container[:mode],...` (mode `rw` by
 * default). An absolute host path is a bind mount; a bare name (or
 * `volume:<name>`) is a named Docker volume.
 */
import { resolve } from "node:path"

export const parseVolumes = (spec: string | null | undefined): Array<string> =>
  (spec ?? "").split(",").map((entry) => entry.trim()).filter((entry) => entry !== "").map((entry) => {
    const [host = "", container = "", mode = "rw"] = entry.split(":")
    if (host === "" || container === "") throw new Error(`Invalid volume "${entry}": expected host:container[:mode]`)
    const source = host.startsWith("volume:")
      ? host.slice("volume:".length)
      : host.startsWith("/")
      ? resolve(host)
      : host
    return `${source}:${container}:${mode}`
  })
