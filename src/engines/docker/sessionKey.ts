/**
 * How a container's server gets its session key without the key ever sitting where a sandboxed
 * command can read it: docker-init (PID 1) and the server run as the sandbox user, so a key passed
 * as `SESSION_API_KEY` would be in `/proc/1/environ` for any command to read, and with it the
 * server (or, over a bridge, a neighbour) could be driven as a client. The server only verifies
 * keys (server/auth.ts compares SHA-256 digests), so its container gets the key's digest in its
 * environment (`EFFECT_SANDBOX_SESSION_API_KEY_SHA256`, as KubernetesRuntime's pods and Modal's
 * sandboxes do; `sessionKeyDigestEnv`, server/sessionKey.ts): a command that reads it has nothing
 * to call the server with. Nothing is copied
 * into the container before it starts, which took an engine round trip (and a mount of the
 * container's filesystem) on every start. The owner keeps the key in a label, which only Docker
 * API users (root-equivalent anyway) can read, so `attach` and restarts find it.
 *
 * The runtime API's containers get the digest the same way. DockerRuntime containers made before
 * the digest was used name a key file instead (`EFFECT_SANDBOX_SESSION_API_KEY_FILE`): the key is
 * copied in before each of their starts, read by the server, then removed (server/sessionKey.ts).
 */
import type Docker from "dockerode"
import { Effect } from "effect"
import { pack } from "tar-stream"
import { SESSION_KEY_FILE_VARIABLE } from "../../executor/childEnv.ts"
import { engineCall } from "./engine.ts"
import { LABEL } from "./labels.ts"

const KEY_DIR = "/tmp"
const KEY_NAME = ".effect-sandbox-session-key"

/** Whether a container's server reads its key from a file copied in before each start (`env` as the engine reports it). */
export const readsKeyFile = (env: ReadonlyArray<string>): boolean =>
  env.some((entry) => entry.startsWith(`${SESSION_KEY_FILE_VARIABLE}=`))

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
