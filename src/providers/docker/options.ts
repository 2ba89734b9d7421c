/**
 * DockerRuntime's options, and their check before anything starts: before the engine is reached,
 * an image built, a workspace made or a container created. A value the engine would refuse (its own
 * 400 half-way through a start) or, worse, read as "no limit" (`cpus: 0` is `NanoCpus: 0`,
 * unlimited; no memory likewise) is a one-line `InvalidOptionsError` naming the option and the rule.
 */
import { Effect, Schema } from "effect"
import type { HostedOptions } from "../../hosted/options.ts"
import { SERVER_PORT } from "../../hosted/serverLaunch.ts"
import { checkLeaseTerms } from "../../runtime/options.ts"
import { InvalidOptionsError } from "../../schema/errors.ts"
import { decodeOptions } from "../../schema/issues.ts"
import { VSCODE_PORT } from "../../serverStart/serverTools.ts"
import type { OwnerLeaseOptions } from "./ownerLease.ts"

/**
 * The shared options (src/hosted/options.ts) and what is a container's own. `workspace` (a
 * directory of this machine) is mounted at /workspace, and `restrictToWorkspace` confines file
 * actions to /workspace inside the container; `sessionId` also names the container, and one that
 * exists is attached to.
 */
export interface DockerRuntimeOptions extends HostedOptions {
  /** The directory mounted at /workspace (created if missing, never removed); default a temporary one. */
  readonly workspace?: string | undefined
  /** Keep the temporary workspace after release. */
  readonly keepWorkspace?: boolean | undefined
  /** Base image to build the runtime image from (default `sandbox.baseContainerImage`). */
  readonly baseImage?: string
  /**
   * `userId`: the sandbox user's uid, and its gid (created in the image if missing, named `user`,
   * default `openhands`). Default: on an engine of this machine, the owner's own uid when it is not
   * root, else 74289, a uid no host account may have (the start fails if one does: give another
   * here); OpenHands' is 1000. Whoever has this uid on the engine's host can read the sandbox's
   * processes and files (runtimeImage/sandboxUser.ts). `memoryMiB` (default 4096) and `cpus`
   * (default 2), with `pidsLimit` 4096 processes.
   */
  readonly userId?: number
  /**
   * Disk quota of the container's writable layer (Docker's `--storage-opt size`; default none).
   * Only some engines enforce it (overlay2 on xfs mounted with `pquota`, btrfs, zfs, ...); others
   * refuse to create the container, and the start fails with a RuntimeStartError saying so.
   * The bind-mounted workspace is the host's disk either way (see docs/runtimes/docker.md).
   */
  readonly storageBytes?: number
  readonly containerNamePrefix?: string
  /** The owner's lease over its containers (defaults: renew 2 s, stale 20 s); `reapEvery` paces the reaper (30 s). */
  readonly ownerLease?: OwnerLeaseOptions
}

const SUBJECT = "DockerRuntime options"

/** Docker's smallest memory limit (the engine refuses less: "Minimum memory limit allowed is 6MB"). */
const MIN_MEMORY_MIB = 6
/** Docker's smallest CPU share: `--cpus` takes 0.01 upward (and 0 means no limit at all). */
const MIN_CPUS = 0.01

/** A container name as Docker takes it (the prefix begins one; `<prefix>-<sessionId>` is the name). */
const CONTAINER_NAME_START = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/
const CONTAINER_NAME_PART = /^[a-zA-Z0-9_.-]+$/
/** A user name `useradd` takes (the image builder creates the sandbox user by it). */
const USERNAME = /^[a-z_][a-z0-9_-]{0,31}$/

const port = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 65535 }))

const DockerOptionsSchema = Schema.Struct({
  baseImage: Schema.optionalKey(Schema.String.check(Schema.isNonEmpty())),
  userId: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  user: Schema.optionalKey(Schema.String.check(Schema.isPattern(USERNAME, {
    expected: "a user name useradd takes (a-z, 0-9, _ and -, at most 32, not starting with a digit or -)"
  }))),
  memoryMiB: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(MIN_MEMORY_MIB, {
    expected: `at least ${MIN_MEMORY_MIB} (Docker's smallest limit)`
  }))),
  cpus: Schema.optionalKey(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(MIN_CPUS, {
    expected: `at least ${MIN_CPUS} (Docker's smallest share; 0 would be no limit)`
  }))),
  storageBytes: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThan(0))),
  appPorts: Schema.optionalKey(Schema.Array(port).check(Schema.isUnique())),
  containerNamePrefix: Schema.optionalKey(Schema.String.check(Schema.isPattern(CONTAINER_NAME_START, {
    expected: "a container name's start (a letter or digit, then letters, digits, _ . -)"
  }))),
  sessionId: Schema.optionalKey(Schema.String.check(Schema.isPattern(CONTAINER_NAME_PART, {
    expected: "letters, digits, _ . - (it names the container)"
  })))
})

/** The ports the runtime publishes itself: an app port among them would be reported as the app's. */
const reservedPorts = (options: DockerRuntimeOptions): ReadonlyArray<readonly [number, string]> => [
  [SERVER_PORT, "the action server's"],
  ...(options.vscode === true ? [[VSCODE_PORT, "VS Code's"] as const] : [])
]

/**
 * Check the container's own options (the shared ones are checked by the hosted runtime first),
 * failing with one line naming each bad field. Pure: it reads nothing but `options`, so it runs
 * before the engine is reached. `subject` names whose options they are in the message (the runtime
 * API checks the limits of its sandboxes with it too).
 */
export const checkDockerOptions = Effect.fn("checkDockerOptions")(
  function*(options: DockerRuntimeOptions, subject: string = SUBJECT) {
    yield* decodeOptions(DockerOptionsSchema, subject)(options)
    yield* checkLeaseTerms(subject, { ...options.ownerLease })
    for (const [reserved, whose] of reservedPorts(options)) {
      if (options.appPorts?.includes(reserved) === true) {
        return yield* new InvalidOptionsError({
          message: `Invalid ${subject}: appPorts: ${reserved} is ${whose} own port in the container`
        })
      }
    }
  }
)
