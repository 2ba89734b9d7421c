/**
 * How a container's server gets its session key without the key ever sitting in an
 * environment a sandboxed command can read: docker-init (PID 1) and the server run as the
 * sandbox user, so a key passed as `SESSION_API_KEY` would be in `/proc/1/environ` for any
 * command to read, and with it the server (or, over a bridge, a neighbour) could be driven
 * as a client. Instead the key is copied into the container, before each start, as a file
 * only the sandbox user can read; the server reads and removes it before it runs anything
 * (server/sessionKey.ts). The owner keeps the key in a label, which only Docker API users
 * (root-equivalent anyway) can read, so `attach` and restarts find it.
 */
import type Docker from "dockerode"
import { Effect } from "effect"
import { pack } from "tar-stream"
import { SESSION_KEY_FILE_VARIABLE } from "../../executor/childEnv.ts"
import { engineCall } from "./engine.ts"
import { LABEL } from "./labels.ts"

const KEY_DIR = "/tmp"
const KEY_NAME = ".effect-sandbox-session-key"

/** The container environment entry that tells the server where its key is. */
export const sessionKeyFileEnv = { [SESSION_KEY_FILE_VARIABLE]: `${KEY_DIR}/${KEY_NAME}` } as const

/**
 * The session key of an existing container: its label, or (containers made before the label
 * existed) its environment.
 */
export const sessionKeyOf = (labels: Readonly<Record<string, string>>, env: ReadonlyArray<string>): string =>
  labels[LABEL.sessionKey] ??
    env.find((e) => e.startsWith("SESSION_API_KEY="))?.slice("SESSION_API_KEY=".length) ?? ""

/** Copy the key into a created or stopped container, readable by the sandbox user `uid` only. */
export const putSessionKey = (container: Docker.Container, key: string, uid: number) =>
  Effect.gen(function*() {
    const tar = pack()
    tar.entry({ name: KEY_NAME, mode: 0o400, uid, gid: uid }, key)
    tar.finalize()
    yield* engineCall(
      "copy the session key into the container",
      () => container.putArchive(tar as unknown as NodeJS.ReadableStream, { path: KEY_DIR })
    )
  })
