/**
 * The action server in a devbox: found (the blueprint made from the runtime image carries it:
 * probed, so a wrong blueprint fails naming what it lacks; one with only a Node gets the payload
 * uploaded at each start into `~/.effect-sandbox/payload`, its workspace `~/workspace`), then run as
 * an asynchronous execution of the command API, whose exit code and output Runloop keeps. Its key is
 * a file the server reads and removes (server/sessionKey.ts), written first: not a launch command,
 * which runs before the devbox is `running`, when nothing can be written yet.
 */
import type { Runloop } from "@runloop/api-client"
import { Effect, Redacted, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import { createReadStream } from "node:fs"
import { dirname, join, posix } from "node:path"
import { SESSION_KEY_FILE_VARIABLE } from "../../executor/childEnv.ts"
import { serverPayload } from "../../layers/internal/payload.ts"
import { IMAGE_FILES, NODE_MINIMUM, parseProbe, PROBE, recentEnough } from "../../layers/internal/serverProbe.ts"
import { shellQuote } from "../../quoting/shellQuote.ts"
import { RuntimeStartError } from "../../schema/errors.ts"
import type { ProviderCall, SandboxSpec, ServerExit } from "../../services/Driver.ts"

/** The workspace the blueprint's Dockerfile gives the devbox user (blueprint.ts). */
const WORKSPACE = "/workspace"
/** Where the key is written (in /tmp: the server removes it once read). */
const KEY_FILE = "/tmp/.effect-sandbox-session-key"
/** Where an uploaded payload goes, relative to the user's home. */
const PAYLOAD_DIR = ".effect-sandbox/payload"
const HOW_TO_MAKE = "make the blueprint from the runtime image (docs/runtimes/runloop.md, \"Making the blueprint\")"

/** The devbox environment entry that tells the server where its key is (a path, not the key). */
export const sessionKeyFileEnv = { [SESSION_KEY_FILE_VARIABLE]: KEY_FILE } as const

/** A devbox to run commands in: the API, the one call primitive, its id. */
export interface InDevbox {
  readonly api: Runloop
  readonly call: ProviderCall
  readonly id: string
}

const refuse = (message: string) => Effect.fail(new RuntimeStartError({ message }))

/** A command in the devbox, to its end: its output, or a start error with what it printed. */
const run = (box: InDevbox, what: string, command: string) =>
  box.call(
    `${what} in devbox ${box.id}`,
    () => box.api.devboxes.executeAndAwaitCompletion(box.id, { command }, { longPoll: { timeoutMs: 60_000 } })
  ).pipe(Effect.flatMap((done) =>
    done.exit_status === 0
      ? Effect.succeed((done.stdout ?? "").trim())
      : refuse(`Runloop could not ${what} in devbox ${box.id}: ${`${done.stdout ?? ""}${done.stderr ?? ""}`.trim()}`)
  ))

/** Upload the payload into `home` for `node` (the directories first: `upload_file` makes none). */
const uploadPayload = Effect.fn("RunloopRuntime.uploadPayload")(function*(box: InDevbox, home: string, node: string) {
  const { directory, manifest } = yield* serverPayload
  const workspace = `${home}/workspace`
  const directories = new Set(manifest.files.map((file) => posix.join(home, PAYLOAD_DIR, dirname(file))))
  yield* run(box, "make the payload's directories", `mkdir -p ${[...directories, workspace].map(shellQuote).join(" ")}`)
  yield* Effect.forEach(
    manifest.files,
    (file) =>
      box.call(`upload ${file} into devbox ${box.id}`, () =>
        box.api.devboxes.uploadFile(box.id, {
          path: posix.join(PAYLOAD_DIR, file),
          file: createReadStream(join(directory, file))
        })),
    { concurrency: 4, discard: true }
  )
  return { node, entry: posix.join(home, PAYLOAD_DIR, "server.mjs"), workspace }
})

/** The blueprint's server files (the runtime image's), else the payload uploaded, else what it lacks. */
const serverFiles = Effect.fn("RunloopRuntime.serverFiles")(
  function*(box: InDevbox, blueprint: string, upload: boolean) {
    const [probe = "", writable = "", home = ""] = (yield* run(
      box,
      "look for the action server",
      `${PROBE}; test -w ${WORKSPACE} && echo writable || echo read-only; echo "$HOME"`
    )).split("\n")
    const probed = parseProbe(probe)
    const lacks = `The Runloop blueprint ${blueprint} has no action-server payload (${IMAGE_FILES.entry})`
    if (probed.found === "none") return yield* refuse(`${lacks} and no Node.js on its PATH: ${HOW_TO_MAKE}.`)
    if (probed.found === "image") {
      if (writable === "writable") return { ...IMAGE_FILES, workspace: WORKSPACE }
      return yield* refuse(`The Runloop blueprint ${blueprint} has no ${WORKSPACE} its user can write: ${HOW_TO_MAKE}.`)
    }
    if (!upload) return yield* refuse(`${lacks} and uploadPayload is off: ${HOW_TO_MAKE}.`)
    if (recentEnough(probed.version)) return yield* uploadPayload(box, home, probed.node)
    return yield* refuse(
      `${lacks}, and its Node.js ${probed.version} (${probed.node}) is older than the ${
        NODE_MINIMUM.join(".")
      } the payload needs: ${HOW_TO_MAKE}, or use a blueprint with a newer Node.`
    )
  }
)

/** The workspace of a devbox whose server already runs (attach): `/workspace`, or the uploaded server's. */
export const runningWorkspace = (box: InDevbox) =>
  run(
    box,
    "find the workspace",
    `if [ -f ${IMAGE_FILES.entry} ]; then echo ${WORKSPACE}; else echo "$HOME/workspace"; fi`
  )

/** Write the key, then start the server (`exec`: its end is the execution's, which `serverExit` follows). */
export const launchServer = Effect.fn("RunloopRuntime.launchServer")(function*(
  box: InDevbox,
  spec: SandboxSpec,
  blueprint: { readonly name: string; readonly upload: boolean }
) {
  const files = yield* serverFiles(box, blueprint.name, blueprint.upload)
  yield* box.call(
    `write the session key into devbox ${box.id}`,
    () => box.api.devboxes.writeFileContents(box.id, { file_path: KEY_FILE, contents: Redacted.value(spec.sessionKey) })
  )
  const argv = spec.server.argv({ ...files, workingDir: files.workspace }).map(shellQuote).join(" ")
  const started = yield* box.call(
    `start the action server in devbox ${box.id}`,
    // A shell of its own per launch: a resumed devbox may still know an earlier one.
    () =>
      box.api.devboxes.executeAsync(box.id, {
        command: `cd ${shellQuote(files.workspace)} && exec ${argv}`,
        shell_name: `effect-sandbox-server-${randomBytes(4).toString("hex")}`
      })
  )
  const serverExit = box.call(
    "follow the action server",
    () => box.api.devboxes.executions.retrieve(box.id, started.execution_id)
  ).pipe(
    Effect.repeat({ schedule: Schedule.spaced("500 millis"), until: (execution) => execution.status === "completed" }),
    Effect.map((ended): ServerExit => ({
      exitCode: ended.exit_status ?? -1,
      output: `${ended.stdout ?? ""}${ended.stderr ?? ""}`
    }))
  )
  return { workspace: files.workspace, serverExit }
})
