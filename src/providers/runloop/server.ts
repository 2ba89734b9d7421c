/**
 * The action server in a devbox: where its files are (hosted/serverFiles.ts: the blueprint's, or the
 * payload uploaded into a blueprint with only a Node), then run as an asynchronous execution of the
 * command API, whose exit code and output Runloop keeps. Its key is a file the server reads and
 * removes (server/sessionKey.ts), written first: not a launch command, which runs before the devbox
 * is `running`, when nothing can be written yet.
 */
import type { Runloop } from "@runloop/api-client"
import { Effect, Redacted, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import { createReadStream } from "node:fs"
import { SESSION_KEY_FILE_VARIABLE } from "../../executor/childEnv.ts"
import { commandOutput, type RunInSandbox, serverFiles } from "../../hosted/serverFiles.ts"
import { shellQuote } from "../../quoting/shellQuote.ts"
import type { ProviderCall, SandboxSpec, ServerExit } from "../../services/Driver.ts"

/** Where the key is written (in /tmp: the server removes it once read). */
const KEY_FILE = "/tmp/.effect-sandbox-session-key"

/** The devbox environment entry that tells the server where its key is (a path, not the key). */
export const sessionKeyFileEnv = { [SESSION_KEY_FILE_VARIABLE]: KEY_FILE } as const

/** A devbox to run commands in: the API, the one call primitive, its id. */
export interface InDevbox {
  readonly api: Runloop
  readonly call: ProviderCall
  readonly id: string
}

/** A shell line in the devbox, to its end. */
export const inDevbox = (box: InDevbox): RunInSandbox => (what, command) => {
  const operation = `${what} in devbox ${box.id}`
  return box.call(
    operation,
    () => box.api.devboxes.executeAndAwaitCompletion(box.id, { command }, { longPoll: { timeoutMs: 60_000 } })
  ).pipe(Effect.flatMap((done) =>
    commandOutput("Runloop", operation, {
      exitCode: done.exit_status,
      stdout: done.stdout ?? "",
      output: `${done.stdout ?? ""}${done.stderr ?? ""}`
    })
  ))
}

/** Write the key, then start the server (`exec`: its end is the execution's, which `serverExit` follows). */
export const launchServer = Effect.fn("RunloopRuntime.launchServer")(function*(
  box: InDevbox,
  spec: SandboxSpec,
  blueprint: { readonly name: string; readonly upload: boolean }
) {
  const files = yield* serverFiles({
    provider: "Runloop",
    noun: "blueprint",
    name: blueprint.name,
    docs: "docs/runtimes/runloop.md",
    upload: blueprint.upload,
    run: inDevbox(box),
    // `upload_file` takes a path from the user's home.
    put: (payload) =>
      Effect.forEach(
        payload,
        (file) =>
          box.call(`upload ${file.fromHome} into devbox ${box.id}`, () =>
            box.api.devboxes.uploadFile(box.id, { path: file.fromHome, file: createReadStream(file.source) })),
        {
          concurrency: 4
        }
      )
  })
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
