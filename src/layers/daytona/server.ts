/**
 * Starting the action server in a Daytona sandbox through the SDK's toolbox: the session key is
 * uploaded as a file the server reads and removes before it runs anything (server/sessionKey.ts:
 * never in an environment a sandboxed command can read, unlike a variable of the sandbox or of
 * the command), then the server runs as an asynchronous command of a toolbox session of its own,
 * which outlives the request that started it. The daemon records the command's exit code and
 * output, so a server that dies at start is reported with what it printed.
 */
import type { Sandbox } from "@daytonaio/sdk"
import { Effect, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import { SESSION_KEY_FILE_VARIABLE } from "../../executor/childEnv.ts"
import { RuntimeStartError } from "../../schema/errors.ts"
import { daytonaCall } from "./errors.ts"

/** Where the key is uploaded (in /tmp: the server removes it once read). */
const KEY_FILE = "/tmp/.effect-sandbox-session-key"

/** The sandbox environment entry that tells the server where its key is (a path, not the key). */
export const sessionKeyFileEnv = { [SESSION_KEY_FILE_VARIABLE]: KEY_FILE } as const

/** One argument for `sh -c`, single-quoted. */
const quote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`

/** A command the server runs as, with what was started (to follow its exit). */
export interface LaunchedServer {
  readonly session: string
  readonly commandId: string
}

/**
 * Upload the key, then start `argv` in the background (`exec`: the server is the session's
 * command, so its exit code is the command's).
 */
export const launchServer = Effect.fn("launchServer")(
  function*(sandbox: Sandbox, argv: ReadonlyArray<string>, sessionKey: string) {
    yield* daytonaCall(
      `upload the session key into sandbox ${sandbox.id}`,
      () => sandbox.fs.uploadFile(Buffer.from(sessionKey), KEY_FILE)
    )
    // A session per launch: a resumed or re-attached sandbox may still list an earlier one.
    const session = `effect-sandbox-server-${randomBytes(4).toString("hex")}`
    yield* daytonaCall(
      `create a toolbox session in sandbox ${sandbox.id}`,
      () => sandbox.process.createSession(session)
    )
    const started = yield* daytonaCall(
      `start the action server in sandbox ${sandbox.id}`,
      () =>
        sandbox.process.executeSessionCommand(session, { command: `exec ${argv.map(quote).join(" ")}`, runAsync: true })
    )
    return { session, commandId: started.cmdId } satisfies LaunchedServer
  }
)

/**
 * Completes, failing with the server's exit code and output, once its command has ended (it
 * never does while the server runs): raced against the `/alive` wait.
 */
export const serverExited = (sandbox: Sandbox, launched: LaunchedServer) =>
  Effect.gen(function*() {
    const ended = yield* daytonaCall(
      "follow the action server",
      () => sandbox.process.getSessionCommand(launched.session, launched.commandId)
    ).pipe(
      Effect.repeat({
        schedule: Schedule.spaced("500 millis"),
        until: (command) => typeof command.exitCode === "number"
      })
    )
    const logs = yield* daytonaCall(
      "read the action server's output",
      () => sandbox.process.getSessionCommandLogs(launched.session, launched.commandId)
    )
    return yield* new RuntimeStartError({
      message:
        `The action server in Daytona sandbox ${sandbox.id} exited with code ${ended.exitCode} before it answered. ` +
        `Its output:\n${(logs.output ?? "").trimEnd()}`
    })
  })
