/**
 * Typed failures of the workspace set-up steps and git helpers (problems of the step itself;
 * a failing user script is an observation, as everywhere else).
 */
import { Schema } from "effect"

/** A set-up step could not do its job (bad repository, failed clone); the message says which and why. */
export class WorkspaceSetupError extends Schema.TaggedError<WorkspaceSetupError>()("WorkspaceSetupError", {
  step: Schema.String,
  message: Schema.String
}) {}

/**
 * OpenHands' git helper errors, by their names: `no_dir_in_git_diff`, `no_repository`, `file_to_large`,
 * `error_in_git_diff`, and for changes `error_running_cmd:<code>:<output>`,
 * `unexpected_value_in_git_diff:<lines>`, `unexpected_status_in_git_diff:<lines>`.
 */
export class GitHelperError extends Schema.TaggedError<GitHelperError>()("GitHelperError", {
  message: Schema.String
}) {}
