/**
 * Where a Daytona sandbox's action server comes from, and its workspace: either the snapshot made
 * from the runtime image carries them (`/opt/effect-sandbox`, `/workspace`: checked, so a wrong
 * snapshot fails naming what it lacks), or, in a snapshot with a Node of its own, the payload is
 * uploaded at start through the toolbox and the workspace made in the user's home.
 */
import type { Sandbox } from "@daytonaio/sdk"
import { Effect } from "effect"
import { join } from "node:path"
import { serverPayload } from "../../layers/internal/payload.ts"
import { IMAGE_FILES, recentEnough } from "../../layers/internal/serverProbe.ts"
import { RuntimeStartError } from "../../schema/errors.ts"
import type { ProviderCall } from "../../services/Driver.ts"

const WORKSPACE = "/workspace"

/** A shell command in the sandbox, as the sandbox user; its output, or a failure naming `what`. */
const inSandbox = (call: ProviderCall, sandbox: Sandbox, what: string, command: string) =>
  call(`${what} in sandbox ${sandbox.id}`, () => sandbox.process.executeCommand(command)).pipe(
    Effect.flatMap((ran) =>
      ran.exitCode === 0 ? Effect.succeed(ran.result.trim()) : Effect.fail(
        new RuntimeStartError({ message: `Daytona: cannot ${what} in sandbox ${sandbox.id}: ${ran.result.trim()}` })
      )
    )
  )

/** The server's Node, entry and workspace in `sandbox`, as `server` says where they come from. */
export const serverFiles = Effect.fn("DaytonaRuntime.serverFiles")(function*(
  call: ProviderCall,
  sandbox: Sandbox,
  options: { readonly snapshot: string; readonly server?: "snapshot" | "upload" | undefined }
) {
  const { snapshot } = options
  if (options.server !== "upload") {
    const missing = yield* inSandbox(
      call,
      sandbox,
      "check for the action server",
      `for f in ${IMAGE_FILES.node} ${IMAGE_FILES.entry}; do test -e "$f" || echo "$f"; done; ` +
        `test -w ${WORKSPACE} || echo "writable ${WORKSPACE}"`
    )
    if (missing === "") return { ...IMAGE_FILES, workspace: WORKSPACE }
    return yield* new RuntimeStartError({
      message: `The Daytona snapshot ${snapshot} has no ${missing.split("\n").join(" and no ")}: ` +
        "it must be made from the runtime image (docs/runtimes/daytona.md, \"Making the snapshot\"), " +
        "or have a Node on PATH for `server: \"upload\"`."
    })
  }
  const { directory, manifest } = yield* serverPayload
  const found = yield* inSandbox(
    call,
    sandbox,
    "look for Node and make the workspace",
    `command -v node >/dev/null || { echo none; exit 0; }; node -p process.versions.node; ` +
      `mkdir -p "$HOME/workspace" && echo "$HOME"`
  )
  const [version = "none", home = ""] = found.split("\n")
  if (version === "none" || !recentEnough(version)) {
    return yield* new RuntimeStartError({
      message: `The Daytona snapshot ${snapshot} has ${version === "none" ? "no Node on PATH" : `Node ${version}`}: ` +
        `the uploaded action server needs Node ${manifest.node} (add it to the snapshot's image, ` +
        "or make the snapshot from the runtime image: docs/runtimes/daytona.md)."
    })
  }
  const target = `${home}/.effect-sandbox/payload`
  const files = manifest.files.map((file) => ({ source: join(directory, file), destination: `${target}/${file}` }))
  yield* call(`upload the action server into sandbox ${sandbox.id}`, () => sandbox.fs.uploadFiles(files))
  return { node: "node", entry: `${target}/server.mjs`, workspace: `${home}/workspace` }
})
