/**
 * The sandbox user of the runtimes that run our image on a host shared with other accounts
 * (Docker, the runtime API's Docker backend, Kubernetes nodes). Docker cannot give one container
 * a user namespace of its own (only the daemon-wide `userns-remap`, which is not ours to set), so
 * a sandbox's processes and files carry host uids: a sandbox running as uid 1000 is, to the
 * host's kernel, whoever is uid 1000 there, who could read its `/proc/<pid>/environ` (secrets,
 * an OpenHands-style session key) and its workspace. The default is therefore a uid (and gid of
 * the same number) that no distribution hands out: past the 16-bit range that login accounts,
 * systemd's dynamic users and `nobody` come from, below 100000, where subordinate ranges
 * (rootless Docker, Podman) start. docs/design-notes.md has the reasoning.
 */
import { Effect } from "effect"
import { InvalidOptionsError } from "../schema/errors.ts"
import { hostHoldersOf } from "./hostAccounts.ts"

/** The sandbox uid, and its gid, unless told otherwise (OpenHands' is 1000). */
export const DEFAULT_SANDBOX_UID = 74289

/** The sandbox user's name, as OpenHands names it. */
export const DEFAULT_SANDBOX_USERNAME = "openhands"

/** `user` of a container: the uid and a group of the same number (the image builder makes it). */
export const containerUser = (uid: number): string => `${uid}:${uid}`

/**
 * `uid`, when no account of this host holds it or the gid of that number; else an
 * `InvalidOptionsError` naming the holders and `option`, where another uid is given.
 */
export const unheldUid = (uid: number, subject: string, option: string): Effect.Effect<number, InvalidOptionsError> =>
  Effect.suspend(() => {
    const holders = hostHoldersOf(uid, uid)
    return holders.length === 0
      ? Effect.succeed(uid)
      : Effect.fail(
        new InvalidOptionsError({
          message: `Invalid ${subject}: ${option}: the sandbox uid/gid ${uid} belongs to ${holders.join(", ")} ` +
            `on this host, who could read the sandboxes' processes and files: give ${option} a number that no ` +
            "account of this host has."
        })
      )
  })

/**
 * Whether this process found the default uid unheld. Asking the host is two synchronous `getent`
 * runs, each a fork of this (often large) process: ~20 ms before every local DockerRuntime start,
 * blocking the event loop (and 40 forks for 20 starts at once). The answer is kept for the
 * process's life, a refusal is not (a host put right is seen at the next start): an account given
 * the default uid while this process runs is seen by the next one (no distribution hands it out).
 */
let defaultUnheld = false

const unheldDefaultUid = (subject: string, option: string): Effect.Effect<number, InvalidOptionsError> =>
  defaultUnheld
    ? Effect.succeed(DEFAULT_SANDBOX_UID)
    : unheldUid(DEFAULT_SANDBOX_UID, subject, option).pipe(Effect.tap(() => Effect.sync(() => defaultUnheld = true)))

/**
 * The uid a Docker engine's sandboxes run as (their gid is the same number): `given` (`option`)
 * when there is one, with a warning when another account of this host has it (the owner's
 * choice, as OpenHands' 1000 may be); else the default, refused if a host account has it. A
 * remote engine's host accounts are not visible from here: the default, unchecked.
 */
export const sandboxUid = Effect.fn("sandboxUid")(function*(
  given: number | undefined,
  local: boolean,
  subject: string,
  option: string
) {
  if (given === undefined) return local ? yield* unheldDefaultUid(subject, option) : DEFAULT_SANDBOX_UID
  const holders = local && given !== process.getuid?.() ? hostHoldersOf(given, given) : []
  if (holders.length > 0) {
    yield* Effect.logWarning(
      `${subject}: the sandbox uid/gid ${given} (${option}) belongs to ${holders.join(", ")} on this host: ` +
        "that account can read the sandbox's processes and files."
    )
  }
  return given
})

/**
 * DockerRuntime's sandbox uid: `sandboxUid`'s, except that on an engine of this machine an owner
 * that is not root gets its own uid by default: it holds the engine socket, so the sandbox shows
 * it nothing new, and it can still remove what the sandbox wrote in the temporary workspace,
 * which it cannot chown to another uid.
 */
export const dockerSandboxUid = (userId: number | undefined, local: boolean) => {
  const owner = process.getuid?.()
  return userId === undefined && local && owner !== undefined && owner !== 0
    ? Effect.succeed(owner)
    : sandboxUid(userId, local, "DockerRuntime options", "userId")
}
