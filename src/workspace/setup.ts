/**
 * OpenHands' workspace set-up steps (`openhands/runtime/base.py`, spec §8.3) as operations on any
 * `Runtime`: everything goes through `Runtime.run`, so the same code sets up a CliRuntime, a local
 * server or a container, and every output is masked by the runtime.
 */
import { Effect, Option, Redacted } from "effect"
import { shellQuote } from "../quoting/shellQuote.ts"
import { FileReadAction, FileWriteAction } from "../schema/Action.ts"
import { ErrorObservation } from "../schema/Observation.ts"
import type { EnvValue } from "../services/EnvValue.ts"
import { Runtime } from "../services/Runtime.ts"
import { type CommandResult, runSetupCommand } from "./command.ts"
import { WorkspaceSetupError } from "./errors.ts"
import { withStatus } from "./status.ts"

/** OpenHands' `git_user_name` / `git_user_email` defaults. */
export const DEFAULT_GIT_USER_NAME = "openhands"
export const DEFAULT_GIT_USER_EMAIL = "openhands@all-hands.dev"

/** `.openhands/setup.sh` may install toolchains: OpenHands gives it 600 s. */
export const SETUP_SCRIPT_TIMEOUT_SECONDS = 600

const SETUP_SCRIPT = ".openhands/setup.sh"
const PRE_COMMIT_SCRIPT = ".openhands/pre-commit.sh"
const PRE_COMMIT_HOOK = ".git/hooks/pre-commit"
const PRE_COMMIT_LOCAL = ".git/hooks/pre-commit.local"
/** The line that marks a hook as ours, so a second install does not move it to `pre-commit.local`. */
const HOOK_MARKER = "This hook was installed by OpenHands"

/** OpenHands' hook, byte for byte: runs the repository's script, or warns and lets the commit through. */
export const PRE_COMMIT_HOOK_CONTENT = `#!/bin/bash
# ${HOOK_MARKER}
# It calls the pre-commit script in the .openhands directory

if [ -x "${PRE_COMMIT_SCRIPT}" ]; then
    source "${PRE_COMMIT_SCRIPT}"
    exit $?
else
    echo "Warning: ${PRE_COMMIT_SCRIPT} not found or not executable"
    exit 0
fi
`

export interface GitUser {
  readonly userName?: string
  readonly userEmail?: string
}

/**
 * `git config --global user.name/user.email` (OpenHands' `_setup_git_config`). Skipped on the `cli`
 * runtime as in OpenHands: there the "sandbox" is the user's own machine and its global git config.
 * A failure is only logged, as there.
 */
export const setupGitConfig = Effect.fn("workspace.setupGitConfig")(function*(user: GitUser = {}) {
  const rt = yield* Runtime
  if (rt.info.kind === "cli") return false
  const name = user.userName ?? DEFAULT_GIT_USER_NAME
  const email = user.userEmail ?? DEFAULT_GIT_USER_EMAIL
  const result = yield* runSetupCommand(
    `git config --global user.name ${shellQuote(name)} && git config --global user.email ${shellQuote(email)}`
  )
  if (result.exitCode !== 0) {
    yield* Effect.logWarning(`Failed to set git config (exit code ${result.exitCode}): ${result.content}`)
    return false
  }
  return true
})

export interface InitialEnvOptions extends GitUser {
  /** Variables for this session (OpenHands' `env_vars` argument); `Redacted` values are masked. */
  readonly envVars?: Readonly<Record<string, EnvValue>>
  /**
   * `SandboxConfig.runtimeStartupEnvVars`. Runtime layers apply these when they start a sandbox;
   * pass them here for a runtime attached to a sandbox someone else started.
   */
  readonly runtimeStartupEnvVars?: Readonly<Record<string, string>>
}

/** OpenHands' `setup_initial_env`: the session's variables, the startup variables, then the git identity. */
export const setupInitialEnv = Effect.fn("workspace.setupInitialEnv")(function*(options: InitialEnvOptions = {}) {
  const rt = yield* Runtime
  for (const vars of [options.envVars, options.runtimeStartupEnvVars]) {
    if (vars !== undefined && Object.keys(vars).length > 0) yield* rt.addEnvVars(vars)
  }
  yield* setupGitConfig(options)
})

export interface CloneOptions {
  /**
   * `owner/repo` (GitHub), or a clone URL (`https://host/owner/repo.git`, `file:///srv/repo.git`).
   * Absent: no clone; with `initGitInEmptyWorkspace` the workspace becomes a new repository.
   */
  readonly repository?: string
  /** Branch to check out; absent: a new `openhands-workspace-<8 chars>` branch. */
  readonly branch?: string
  /** Access token for an http(s) repository. Never in a command, an observation or a log. */
  readonly token?: Redacted.Redacted<string>
  /** User name sent with the token (GitHub: `x-access-token`, GitLab: `oauth2`, Bitbucket: `x-token-auth`). */
  readonly tokenUser?: string
  /**
   * The variable that carries the token into the sandbox (default `GIT_TOKEN`); it stays set, masked,
   * and the clone's credential helper reads it, so later `git push`/`git fetch` through `origin`
   * work as in OpenHands without the token in `.git/config` or in any process's argv.
   */
  readonly tokenVariable?: string
  /** OpenHands' `init_git_in_empty_workspace`. */
  readonly initGitInEmptyWorkspace?: boolean
}

/** The URL without user name and password, for messages and to put the token in their place. */
const withoutCredentials = (url: URL): string => {
  const bare = new URL(url.href)
  bare.username = ""
  bare.password = ""
  return bare.href
}

/**
 * The `git clone` options that give git the token without putting it in any argv or file: a
 * credential helper, kept in the clone's `.git/config` for later pushes, that prints `$variable`
 * with the shell's builtin `printf` (so no process is started with the value in its argv; the
 * URL git and `git-remote-http` see carries no credentials). Scoped to the repository's origin so
 * a redirect or a submodule on another host is never sent the token; the empty helper before it
 * drops helpers of the user's or system's config for that origin, so none stores the token.
 */
const credentialHelperOptions = (url: URL, variable: string, user: string): string => {
  const key = `credential.${url.protocol}//${url.host}.helper`
  const helper = `!f() { if test "$1" = get; then printf 'username=%s\\npassword=%s\\n' ${
    shellQuote(user)
  } "$${variable}"; fi; }; f`
  return `-c ${shellQuote(`${key}=`)} -c ${shellQuote(`${key}=${helper}`)}`
}

const cloneError = (message: string) => new WorkspaceSetupError({ step: "cloneOrInitRepo", message })

const parseRepository = (repository: string): URL | undefined => {
  if (/^[\w.-]+\/[\w.-]+$/.test(repository)) return new URL(`https://github.com/${repository}.git`)
  return URL.canParse(repository) ? new URL(repository) : undefined
}

/** Eight random `[a-z0-9]`, as OpenHands names its working branch. */
const randomBranchSuffix = () => {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
  return Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => alphabet[b % alphabet.length]).join("")
}

const failed = (what: string, result: CommandResult) =>
  cloneError(`${what} failed (exit code ${result.exitCode}): ${result.content}`)

/**
 * OpenHands' `clone_or_init_repo`: clone into `<workspace>/<name>` (status SETTING_UP_WORKSPACE),
 * `cd` there in the session shell and check out `branch` or a new working branch. Returns the
 * directory name, `""` when nothing was cloned.
 */
export const cloneOrInitRepo = Effect.fn("workspace.cloneOrInitRepo")(function*(options: CloneOptions = {}) {
  const rt = yield* Runtime
  const workspace = rt.info.workspace
  if (options.repository === undefined) {
    if (options.initGitInEmptyWorkspace === true) {
      // On `cli` the global config is the user's own: only the init (see `setupGitConfig`).
      const safe = rt.info.kind === "cli" ? "" : ` && git config --global --add safe.directory ${shellQuote(workspace)}`
      const result = yield* runSetupCommand(`cd ${shellQuote(workspace)} && git init${safe}`)
      if (result.exitCode !== 0) return yield* failed("git init", result)
    }
    return ""
  }
  const url = parseRepository(options.repository)
  if (url === undefined) return yield* cloneError("Missing either Git token or valid repository")
  if (options.token !== undefined && url.protocol !== "https:" && url.protocol !== "http:") {
    return yield* cloneError(`A token can only be sent to an http(s) repository, not ${url.protocol}//...`)
  }
  const name = url.pathname.replace(/\/+$/, "").split("/").pop()!.replace(/\.git$/, "")
  if (name === "" || name === "." || name === "..") {
    return yield* cloneError(`No repository name in ${withoutCredentials(url)}`)
  }
  const variable = options.tokenVariable ?? "GIT_TOKEN"
  const token = Option.map(Option.fromUndefinedOr(options.token), (secret) => ({
    secret,
    variable,
    user: options.tokenUser ?? "x-access-token"
  }))
  return yield* withStatus(
    "SETTING_UP_WORKSPACE",
    Effect.gen(function*() {
      // Redacted: the runtime masks the value in every later output; the credential helper reads it.
      if (Option.isSome(token)) yield* rt.addEnvVars({ [variable]: token.value.secret })
      const dir = `${workspace}/${name}`
      const source = Option.match(token, {
        onNone: () => shellQuote(url.href),
        onSome: ({ user, variable }) =>
          `${credentialHelperOptions(url, variable, user)} ${shellQuote(withoutCredentials(url))}`
      })
      const clone = yield* runSetupCommand(`GIT_TERMINAL_PROMPT=0 git clone ${source} ${shellQuote(dir)}`)
      if (clone.exitCode !== 0) return yield* failed("git clone", clone)
      const checkout = options.branch === undefined
        ? `git checkout -b openhands-workspace-${randomBranchSuffix()}`
        : `git checkout ${shellQuote(options.branch)}`
      const switched = yield* runSetupCommand(`cd ${shellQuote(dir)} && ${checkout}`)
      if (switched.exitCode !== 0) return yield* failed("git checkout", switched)
      return name
    })
  )
})

/** Whether `path` (relative to the session shell's directory) can be read, as OpenHands checks for scripts. */
const readable = Effect.fnUntraced(function*(path: string) {
  const rt = yield* Runtime
  return !((yield* rt.run(new FileReadAction({ path }))) instanceof ErrorObservation)
})

/**
 * OpenHands' `maybe_run_setup_script`: if `.openhands/setup.sh` exists in the session shell's
 * directory, source it there (status SETTING_UP_WORKSPACE, 600 s). Returns its result, or none.
 */
export const maybeRunSetupScript = Effect.fn("workspace.maybeRunSetupScript")(function*() {
  if (!(yield* readable(SETUP_SCRIPT))) return Option.none<CommandResult>()
  const result = yield* withStatus(
    "SETTING_UP_WORKSPACE",
    runSetupCommand(`chmod +x ${SETUP_SCRIPT} && source ${SETUP_SCRIPT}`, { timeout: SETUP_SCRIPT_TIMEOUT_SECONDS })
  )
  return Option.some(result)
})

/** A hook-installation command; a failure is logged as OpenHands logs it, and stops the installation. */
const hookStep = (command: string, what: string) =>
  Effect.flatMap(runSetupCommand(command), (result) =>
    result.exitCode === 0
      ? Effect.succeed(true)
      : Effect.as(Effect.logError(`Failed to ${what}: ${result.content}`), false))

/**
 * OpenHands' `maybe_setup_git_hooks`: with `.openhands/pre-commit.sh` present, install a pre-commit
 * hook that runs it (status SETTING_UP_GIT_HOOKS). A hook that is not ours is kept as
 * `pre-commit.local`. Returns whether the hook was installed; failures are logged, as there.
 */
export const maybeSetupGitHooks = Effect.fn("workspace.maybeSetupGitHooks")(function*() {
  if (!(yield* readable(PRE_COMMIT_SCRIPT))) return false
  const rt = yield* Runtime
  return yield* withStatus(
    "SETTING_UP_GIT_HOOKS",
    Effect.gen(function*() {
      if (!(yield* hookStep("mkdir -p .git/hooks", "create git hooks directory"))) return false
      if (!(yield* hookStep(`chmod +x ${PRE_COMMIT_SCRIPT}`, "make pre-commit script executable"))) return false
      const existing = yield* rt.run(new FileReadAction({ path: PRE_COMMIT_HOOK }))
      if (!(existing instanceof ErrorObservation) && !existing.content.includes(HOOK_MARKER)) {
        yield* Effect.logInfo("Preserving existing pre-commit hook")
        const kept = yield* hookStep(
          `mv ${PRE_COMMIT_HOOK} ${PRE_COMMIT_LOCAL} && chmod +x ${PRE_COMMIT_LOCAL}`,
          "preserve existing pre-commit hook"
        )
        if (!kept) return false
      }
      const written = yield* rt.run(new FileWriteAction({ path: PRE_COMMIT_HOOK, content: PRE_COMMIT_HOOK_CONTENT }))
      if (written instanceof ErrorObservation) {
        yield* Effect.logError(`Failed to write pre-commit hook: ${written.content}`)
        return false
      }
      if (!(yield* hookStep(`chmod +x ${PRE_COMMIT_HOOK}`, "make pre-commit hook executable"))) return false
      yield* Effect.logInfo("Git pre-commit hook installed successfully")
      return true
    })
  )
})
