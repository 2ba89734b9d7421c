/**
 * Where a Daytona sandbox's action server comes from, and its workspace: either the snapshot
 * made from the runtime image carries them (`/opt/effect-sandbox`, `/workspace`: checked, so a
 * wrong snapshot fails naming what it lacks), or, in a snapshot with a Node of its own, the
 * payload is uploaded at start through the toolbox and the workspace made in the user's home.
 */
import type { Sandbox } from "@daytonaio/sdk"
import { Effect } from "effect"
import { join } from "node:path"
import { RuntimeStartError } from "../../schema/errors.ts"
import { serverPayload } from "../internal/payload.ts"
import { daytonaCall } from "./errors.ts"

/** What the server runs with in the sandbox. */
export interface ServerFiles {
  readonly node: string
  readonly entry: string
  readonly workspace: string
}

/** The runtime image's Node, server and workspace (docs/image-contract.md, snapshot.ts). */
const IN_SNAPSHOT: ServerFiles = {
  node: "/opt/effect-sandbox/bin/node",
  entry: "/opt/effect-sandbox/payload/server.mjs",
  workspace: "/workspace"
}

/** A shell command in the sandbox, as the sandbox user; its output, or a failure naming `what`. */
const inSandbox = (sandbox: Sandbox, what: string, command: string) =>
  Effect.gen(function*() {
    const ran = yield* daytonaCall(`${what} in sandbox ${sandbox.id}`, () => sandbox.process.executeCommand(command))
    if (ran.exitCode !== 0) {
      return yield* new RuntimeStartError({
        message: `Daytona: cannot ${what} in sandbox ${sandbox.id}: ${ran.result.trim()}`
      })
    }
    return ran.result.trim()
  })

/** The snapshot's server files, or a failure naming what it lacks. */
export const snapshotServer = (sandbox: Sandbox, snapshot: string) =>
  Effect.gen(function*() {
    const { node, entry, workspace } = IN_SNAPSHOT
    const missing = yield* inSandbox(
      sandbox,
      "check for the action server",
      `for f in ${node} ${entry}; do test -e "$f" || echo "$f"; done; test -w ${workspace} || echo "writable ${workspace}"`
    )
    if (missing !== "") {
      return yield* new RuntimeStartError({
        message: `The Daytona snapshot ${snapshot} has no ${missing.split("\n").join(" and no ")}: ` +
          "it must be made from the runtime image (docs/runtimes/daytona.md, \"Making the snapshot\"), " +
          "or have a Node on PATH for `server: \"upload\"`."
      })
    }
    return IN_SNAPSHOT
  })

/** `major.minor` of a version (`22.19.0`, `>=22.19`) as one comparable number. */
const versionRank = (version: string) => {
  const [major = 0, minor = 0] = version.replace(/^[^\d]*/, "").split(".").map(Number)
  return major * 1000 + minor
}

/** Upload the payload into a sandbox whose image has a Node on PATH (the versions the payload needs). */
export const uploadedServer = (sandbox: Sandbox, snapshot: string) =>
  Effect.gen(function*() {
    const { directory, manifest } = yield* serverPayload
    const found = yield* inSandbox(
      sandbox,
      "look for Node and make the workspace",
      `command -v node >/dev/null || { echo none; exit 0; }; node -p process.versions.node; ` +
        `mkdir -p "$HOME/workspace" && echo "$HOME"`
    )
    const [version = "none", home = ""] = found.split("\n")
    if (version === "none" || versionRank(version) < versionRank(manifest.node)) {
      return yield* new RuntimeStartError({
        message:
          `The Daytona snapshot ${snapshot} has ${version === "none" ? "no Node on PATH" : `Node ${version}`}: ` +
          `the uploaded action server needs Node ${manifest.node} (add it to the snapshot's image, ` +
          "or make the snapshot from the runtime image: docs/runtimes/daytona.md)."
      })
    }
    const target = `${home}/.effect-sandbox/payload`
    yield* daytonaCall(
      `upload the action server into sandbox ${sandbox.id}`,
      () =>
        sandbox.fs.uploadFiles(
          manifest.files.map((file) => ({ source: join(directory, file), destination: `${target}/${file}` }))
        )
    )
    return { node: "node", entry: `${target}/server.mjs`, workspace: `${home}/workspace` } satisfies ServerFiles
  })

/** The workspace of a sandbox whose server already runs (attach): where `server` put it. */
export const runningWorkspace = (sandbox: Sandbox, server: "snapshot" | "upload" | undefined) =>
  server === "upload"
    ? inSandbox(sandbox, "find the workspace", `echo "$HOME/workspace"`)
    : Effect.succeed(IN_SNAPSHOT.workspace)
