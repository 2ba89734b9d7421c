/**
 * The options every runtime layer shares (services/RuntimeOptions.ts), checked before anything
 * starts and turned into what each runtime needs, in one place so the runtimes cannot drift apart:
 * a bad value is a typed `InvalidOptionsError` with one line naming the option, not a server that
 * silently falls back to its default (a negative no-change timeout became 10 s) or a shell that
 * returns at once.
 */
import { Duration, Effect, Option, Schema } from "effect"
import { DEFAULT_PYTHON, type ExecutorOptions } from "../executor/ActionExecutor.ts"
import { InvalidOptionsError } from "../schema/errors.ts"
import { decodeOptions } from "../schema/issues.ts"
import type { SandboxConfig } from "../schema/SandboxConfig.ts"
import type { RuntimeOptions, RuntimeTools } from "../services/RuntimeOptions.ts"

const RuntimeOptionsSchema = Schema.Struct({
  noChangeTimeoutSeconds: Schema.optionalKey(Schema.Number.check(Schema.isGreaterThan(0))),
  pidsLimit: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThan(0)))
})

/** Fails with `Invalid <subject>: noChangeTimeoutSeconds: Expected a value greater than 0` and the like. */
export const checkRuntimeOptions = (subject: string, options: object) =>
  decodeOptions(RuntimeOptionsSchema, subject)(options)

/**
 * Each duration of an owner's lease (`ownerLease` of Docker and Kubernetes) readable, and a renewal
 * well inside the term (else the lease lapses between beats): `Invalid <subject>: ownerLease.<field>: ...`.
 */
export const checkLeaseTerms = Effect.fn("checkLeaseTerms")(function*(
  subject: string,
  terms: { readonly [field: string]: Duration.Input | undefined }
) {
  const read = (field: string) => {
    const input = terms[field]
    if (input === undefined) return Effect.succeed(undefined)
    return Option.match(Duration.fromInput(input), {
      onNone: () =>
        Effect.fail(new InvalidOptionsError({ message: `Invalid ${subject}: ownerLease.${field}: not a duration` })),
      onSome: Effect.succeed
    })
  }
  const renewEvery = yield* read("renewEvery")
  const staleAfter = yield* read("staleAfter")
  yield* Effect.forEach(Object.keys(terms), read)
  if (renewEvery !== undefined && staleAfter !== undefined && Duration.isGreaterThanOrEqualTo(renewEvery, staleAfter)) {
    return yield* new InvalidOptionsError({
      message: `Invalid ${subject}: ownerLease.renewEvery: must be shorter than staleAfter`
    })
  }
})

/**
 * Refuses `workspace` for a runtime whose sandbox lives elsewhere (a provider's VM or container):
 * a directory on this machine cannot be mounted there, and ignoring it would let a swapped-in
 * layer silently work on another directory than the one asked for.
 */
export const refuseHostWorkspace = (runtime: string, sandboxName: string, options: object) =>
  (options as Pick<RuntimeOptions, "workspace">).workspace === undefined
    ? Effect.void
    : Effect.fail(
      new InvalidOptionsError({
        message: `Invalid ${runtime} options: workspace: a host directory cannot be mounted into ${sandboxName} ` +
          "(its workspace is /workspace there): upload files with copyTo instead."
      })
    )

/** File actions are confined to the workspace unless asked otherwise, on every runtime. */
export const restrictsToWorkspace = (options: Pick<RuntimeOptions, "restrictToWorkspace">): boolean =>
  options.restrictToWorkspace ?? true

/** The environment a runtime's shells start with beyond the host's: the sandbox's startup variables, then `env`. */
export const startupEnv = (
  sandbox: SandboxConfig,
  options: Pick<RuntimeOptions, "env">
): Readonly<Record<string, string>> => ({ ...sandbox.runtimeStartupEnvVars, ...options.env })

/** The IPython setting of `tools`, with agent_skills on unless turned off; undefined when off. */
export const ipythonSetting = (
  ipython: RuntimeTools["ipython"]
): { readonly python: string | undefined; readonly agentSkills: boolean } | undefined =>
  ipython === undefined || ipython === false
    ? undefined
    : ipython === true
    ? { python: undefined, agentSkills: true }
    : { python: ipython.python, agentSkills: ipython.agentSkills ?? true }

/** The browser setting of `tools`; undefined when off. */
export const browserSetting = (browser: RuntimeTools["browser"]): { readonly executablePath?: string } | undefined =>
  browser === undefined || browser === false ? undefined : browser === true ? {} : browser

/** The executor's IPython and browser options (CliRuntime runs the executor in process). */
export const executorTools = (tools: RuntimeTools): Pick<ExecutorOptions, "ipython" | "browser"> => {
  const ipython = ipythonSetting(tools.ipython)
  const browser = browserSetting(tools.browser)
  return {
    ...(ipython === undefined
      ? {}
      : { ipython: { python: ipython.python ?? DEFAULT_PYTHON, agentSkills: ipython.agentSkills } }),
    ...(browser === undefined ? {} : { browser })
  }
}
