/**
 * Docker for the tests: the engine must answer and the images must exist
 * (`npm run image:base` and `npm run image:tools` build them; CI's .ci/run does;
 * a missing one is built here, which takes a minute or two). In CI a missing engine
 * fails the tests; elsewhere they are skipped with a message saying why.
 */
import { describe } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { join } from "node:path"

/** Whether a Docker engine answers `docker info`. */
export const engineAnswers = (): boolean => spawnSync("docker", ["info"], { stdio: "ignore" }).status === 0

/** An image variant's tag, built by `scripts/base-image.sh` when missing. */
const imageOf = (variant: "base" | "tools"): string => {
  const script = join(import.meta.dirname, "..", "..", "scripts", "base-image.sh")
  const result = spawnSync(script, [variant], { encoding: "utf8" })
  if (result.status !== 0) throw new Error(`Cannot build the ${variant} image: ${result.stderr}`)
  return result.stdout.trim().split("\n").at(-1)!
}

/** The Debian base image tag (`npm run image:base`). */
export const baseImage = (): string => imageOf("base")

/** The tools image tag (`npm run image:tools`): the base plus Chromium, ipykernel and Pillow. */
export const toolsImage = (): string => imageOf("tools")

/** `describe` when Docker is usable; in CI a missing engine is an error, elsewhere a skip. */
export const describeDocker = (name: string, body: () => void) => {
  if (engineAnswers()) return describe(name, body)
  if (process.env["CI"] === "true") {
    throw new Error("Docker tests need a running Docker engine in CI: .ci/run installs docker.io and starts dockerd.")
  }
  return describe.skip(`${name} (skipped: no Docker engine answers \`docker info\`; start dockerd to run them)`, body)
}

/** Containers carrying a label (`key=value`), running or not. */
export const containersWithLabel = (label: string): Array<string> =>
  spawnSync("docker", ["ps", "-aq", "--filter", `label=${label}`], { encoding: "utf8" }).stdout.split("\n").filter(
    (id) => id !== ""
  )
