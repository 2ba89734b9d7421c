/**
 * DockerRuntime's own options checked before anything starts: before the engine is reached, an
 * image built, a workspace made or a container created. A value the engine would refuse (its own
 * 400 half-way through a start) or, worse, read as "no limit" (`cpus: 0` is `NanoCpus: 0`,
 * unlimited; `memoryBytes: 0` likewise) is a one-line `InvalidOptionsError` naming the option and
 * the rule instead.
 */
import { Effect, Schema } from "effect"
import { checkLeaseTerms, checkRuntimeOptions } from "../../runtime/options.ts"
import { InvalidOptionsError } from "../../schema/errors.ts"
import { decodeOptions } from "../../schema/issues.ts"
import { VSCODE_PORT } from "../internal/serverTools.ts"
import { SERVER_PORT } from "./container.ts"
import type { OwnerLeaseOptions } from "./ownerLease.ts"

const SUBJECT = "DockerRuntime options"

/** The options read here by name (the schema decodes the rest of DockerRuntimeOptions, and layerPool's `warmContainers`). */
export interface CheckedDockerOptions {
  readonly appPorts?: ReadonlyArray<number> | undefined
  readonly vscode?: boolean | undefined
  readonly ownerLease?: OwnerLeaseOptions | undefined
  readonly warmContainers?: number | undefined
}

/** Docker's smallest memory limit (the engine refuses less: "Minimum memory limit allowed is 6MB"). */
const MIN_MEMORY_BYTES = 6 * 1024 * 1024
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
  username: Schema.optionalKey(Schema.String.check(Schema.isPattern(USERNAME, {
    expected: "a user name useradd takes (a-z, 0-9, _ and -, at most 32, not starting with a digit or -)"
  }))),
  memoryBytes: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(MIN_MEMORY_BYTES, {
    expected: `at least ${MIN_MEMORY_BYTES} (6 MiB, Docker's smallest limit)`
  }))),
  cpus: Schema.optionalKey(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(MIN_CPUS, {
    expected: `at least ${MIN_CPUS} (Docker's smallest share; 0 would be no limit)`
  }))),
  storageBytes: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThan(0))),
  appPorts: Schema.optionalKey(Schema.Array(port).check(Schema.isUnique())),
  containerNamePrefix: Schema.optionalKey(Schema.String.check(Schema.isPattern(CONTAINER_NAME_START, {
    expected: "a container name's start (a letter or digit, then letters, digits, _ . -)"
  }))),
  /** `layerPool`'s: none would be a pool whose `layerWarm` waits forever. */
  warmContainers: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))),
  sessionId: Schema.optionalKey(Schema.String.check(Schema.isPattern(CONTAINER_NAME_PART, {
    expected: "letters, digits, _ . - (it names the container)"
  })))
})

/** The ports the runtime publishes itself: an app port among them would be reported as the app's. */
const reservedPorts = (options: CheckedDockerOptions): ReadonlyArray<readonly [number, string]> => [
  [SERVER_PORT, "the action server's"],
  ...(options.vscode === true ? [[VSCODE_PORT, "VS Code's"] as const] : [])
]

/**
 * Check the options (the shared ones, then the container's), failing with one line naming each bad
 * field. Pure: it reads nothing but `options`, so it can run before the engine is reached.
 */
export const checkDockerOptions = Effect.fn("checkDockerOptions")(function*(options: CheckedDockerOptions) {
  yield* checkRuntimeOptions(SUBJECT, options)
  yield* decodeOptions(DockerOptionsSchema, SUBJECT)(options)
  yield* checkLeaseTerms(SUBJECT, { ...options.ownerLease })
  for (const [reserved, whose] of reservedPorts(options)) {
    if (options.appPorts?.includes(reserved) === true) {
      return yield* new InvalidOptionsError({
        message: `Invalid ${SUBJECT}: appPorts: ${reserved} is ${whose} own port in the container`
      })
    }
  }
})
