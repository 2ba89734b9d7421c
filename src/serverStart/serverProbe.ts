/**
 * Finding what runs the action server in a cloud sandbox made from an image we did not start
 * (an E2B template, a Daytona snapshot, a Runloop blueprint): the runtime image's own Node and
 * payload (docs/image-contract.md: `/opt/effect-sandbox`), else a Node on the PATH recent enough for
 * an uploaded payload, else nothing. One shell line, run by the provider's command API for
 * hosted/serverFiles.ts, which decides.
 */

/** The Node binary and server script the server is started with. */
export interface ServerFiles {
  readonly node: string
  readonly entry: string
}

/** Where the runtime image, and so a template or blueprint made from it, carries them. */
export const IMAGE_FILES: ServerFiles = {
  node: "/opt/effect-sandbox/bin/node",
  entry: "/opt/effect-sandbox/payload/server.mjs"
}

/** The oldest Node the payload runs on (scripts/build-payload.ts). */
export const NODE_MINIMUM = [22, 19] as const

/** Prints one line: `template`, `node <path> <version>`, or `none`. */
export const PROBE = `if [ -x ${IMAGE_FILES.node} ] && [ -f ${IMAGE_FILES.entry} ]; then echo template; ` +
  `elif command -v node >/dev/null 2>&1; then echo "node $(command -v node) $(node -p process.versions.node)"; ` +
  `else echo none; fi`

/** What the probe found. */
export type Probed =
  | { readonly found: "image" }
  | { readonly found: "node"; readonly node: string; readonly version: string }
  | { readonly found: "none" }

export const parseProbe = (stdout: string): Probed => {
  const [found = "none", node = "", version = ""] = stdout.trim().split(" ")
  return found === "template" ? { found: "image" } : found === "node" ? { found, node, version } : { found: "none" }
}

/** Whether a Node version runs the payload. */
export const recentEnough = (version: string) => {
  const [major = 0, minor = 0] = version.split(".").map(Number)
  return major > NODE_MINIMUM[0] || (major === NODE_MINIMUM[0] && minor >= NODE_MINIMUM[1])
}
