/**
 * The action server in a devbox: found (the blueprint made from the runtime image carries it:
 * probed, so a wrong blueprint fails naming what it lacks; a blueprint with only a Node gets the
 * payload uploaded: upload.ts), then started through Runloop's
 * command API. The session key is written as a file the server reads and removes before it runs
 * anything (server/sessionKey.ts: never in an environment a sandboxed command can read, unlike a
 * devbox variable or a launch command's), then the server runs as an asynchronous execution,
 * whose exit code and output Runloop keeps: a server that dies at start is reported with them.
 *
 * Not a launch command: those run before the devbox is `running`, when the key cannot be written
 * yet, and their failure is not an execution we could follow.
 */
import type { Runloop } from "@runloop/api-client"
import { Effect, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import { SESSION_KEY_FILE_VARIABLE } from "../../executor/childEnv.ts"
import { shellQuote } from "../../quoting/shellQuote.ts"
import { RuntimeStartError } from "../../schema/errors.ts"
import {
  IMAGE_FILES,
  NODE_MINIMUM,
  parseProbe,
  PROBE,
  recentEnough,
  type ServerFiles
} from "../internal/serverProbe.ts"
import { runloopCall } from "./errors.ts"
import { uploadPayload } from "./upload.ts"

/** The devbox's workspace (the blueprint's Dockerfile makes it the user's: blueprint.ts). */
export const WORKSPACE = "/workspace"

/** Where the key is written (in /tmp: the server removes it once read). */
const KEY_FILE = "/tmp/.effect-sandbox-session-key"

/** The devbox environment entry that tells the server where its key is (a path, not the key). */
export const sessionKeyFileEnv = { [SESSION_KEY_FILE_VARIABLE]: KEY_FILE } as const

/** A command in the devbox, to its end: its output, or a failure with what it printed. */
const inDevbox = (api: Runloop, devboxId: string, what: string, command: string) =>
  Effect.gen(function*() {
    const done = yield* runloopCall(
      `${what} in devbox ${devboxId}`,
      () => api.devboxes.executeAndAwaitCompletion(devboxId, { command }, { longPoll: { timeoutMs: 60_000 } })
    )
    if (done.exit_status !== 0) {
      return yield* new RuntimeStartError({
        message: `Runloop: cannot ${what} in devbox ${devboxId}: ${`${done.stdout ?? ""}${done.stderr ?? ""}`.trim()}`
      })
    }
    return (done.stdout ?? "").trim()
  })

/** What the server runs with: its Node and script, and the workspace. */
export interface DevboxServer extends ServerFiles {
  readonly workspace: string
}

/**
 * The blueprint's server files (the runtime image's), or, when it lacks them, has a Node recent
 * enough and `upload` allows, the payload uploaded (upload.ts); else a failure naming what it lacks.
 */
export const blueprintServer = Effect.fn("RunloopRuntime.blueprintServer")(
  function*(api: Runloop, devboxId: string, blueprint: string, upload: boolean) {
    const [probe = "", workspace = "", home = ""] = (yield* inDevbox(
      api,
      devboxId,
      "look for the action server",
      `${PROBE}; test -w ${WORKSPACE} && echo writable || echo read-only; echo "$HOME"`
    )).split("\n")
    const probed = parseProbe(probe)
    const lacks = `The Runloop blueprint ${blueprint} has no action-server payload (${IMAGE_FILES.entry})`
    const howToMake = "make the blueprint from the runtime image (docs/runtimes/runloop.md, \"Making the blueprint\")"
    if (probed.found === "none") {
      return yield* new RuntimeStartError({ message: `${lacks} and no Node.js on its PATH: ${howToMake}.` })
    }
    if (probed.found === "node") {
      if (!upload) {
        return yield* new RuntimeStartError({ message: `${lacks} and uploadPayload is off: ${howToMake}.` })
      }
      if (!recentEnough(probed.version)) {
        return yield* new RuntimeStartError({
          message: `${lacks}, and its Node.js ${probed.version} (${probed.node}) is older than the ${
            NODE_MINIMUM.join(".")
          } the payload needs: ${howToMake}, or use a blueprint with a newer Node.`
        })
      }
      return yield* uploadPayload({
        api,
        devboxId,
        home,
        node: probed.node,
        run: (what, command) => inDevbox(api, devboxId, what, command)
      })
    }
    if (workspace !== "writable") {
      return yield* new RuntimeStartError({
        message: `The Runloop blueprint ${blueprint} has no ${WORKSPACE} its user can write: ${howToMake}.`
      })
    }
    return { ...IMAGE_FILES, workspace: WORKSPACE } satisfies DevboxServer
  }
)

/** The workspace of a devbox whose server already runs (attach): `/workspace`, or the uploaded server's. */
export const runningWorkspace = (api: Runloop, devboxId: string) =>
  inDevbox(
    api,
    devboxId,
    "find the workspace",
    `if [ -f ${IMAGE_FILES.entry} ]; then echo ${WORKSPACE}; else echo "$HOME/workspace"; fi`
  )

/** What was started: the execution the server runs as. */
export interface LaunchedServer {
  readonly devboxId: string
  readonly executionId: string
}

/** Write the key, then start `argv` in the background (`exec`: the server is the execution's process). */
export const launchServer = Effect.fn("RunloopRuntime.launchServer")(
  function*(
    api: Runloop,
    devboxId: string,
    server: { readonly argv: ReadonlyArray<string>; readonly workspace: string },
    sessionKey: string
  ) {
    yield* runloopCall(
      `write the session key into devbox ${devboxId}`,
      () => api.devboxes.writeFileContents(devboxId, { file_path: KEY_FILE, contents: sessionKey })
    )
    const started = yield* runloopCall(
      `start the action server in devbox ${devboxId}`,
      () =>
        api.devboxes.executeAsync(devboxId, {
          command: `cd ${shellQuote(server.workspace)} && exec ${server.argv.map(shellQuote).join(" ")}`,
          // A shell of its own per launch: a resumed devbox may still know an earlier one.
          shell_name: `effect-sandbox-server-${randomBytes(4).toString("hex")}`
        })
    )
    return { devboxId, executionId: started.execution_id } satisfies LaunchedServer
  }
)

/**
 * Completes, failing with the server's exit code and output, once its execution has ended (it
 * never does while the server runs): raced against the `/alive` wait.
 */
export const serverExited = (api: Runloop, launched: LaunchedServer) =>
  runloopCall(
    "follow the action server",
    () => api.devboxes.executions.retrieve(launched.devboxId, launched.executionId)
  ).pipe(
    Effect.repeat({ schedule: Schedule.spaced("500 millis"), until: (execution) => execution.status === "completed" }),
    Effect.flatMap((ended) => {
      const output = `${ended.stdout ?? ""}${ended.stderr ?? ""}`.trimEnd().split("\n").slice(-20).join("\n")
      return new RuntimeStartError({
        message: `The action server in Runloop devbox ${launched.devboxId} exited with code ${ended.exit_status} ` +
          `before it answered. Its last output:\n${output}`
      })
    })
  )
