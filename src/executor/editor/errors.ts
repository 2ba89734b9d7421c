/**
 * OHEditor's `ToolError` family. Every failure the agent can cause is one of these; the editor
 * reports it as `ERROR:\n<message>` (the server's `_execute_file_editor` wrapper).
 */
import { Data } from "effect"

export class ToolError extends Data.TaggedError("ToolError")<{ readonly message: string }> {}

/** `EditorToolParameterInvalidError`: `` Invalid `<param>` parameter: <value>. <hint> ``. */
export const parameterInvalid = (parameter: string, value: string, hint: string): ToolError =>
  new ToolError({ message: `Invalid \`${parameter}\` parameter: ${value}. ${hint}` })

/** `EditorToolParameterMissingError`. */
export const parameterMissing = (command: string, parameter: string): ToolError =>
  new ToolError({ message: `Parameter \`${parameter}\` is required for command: ${command}.` })

/** `FileValidationError`. */
export const fileValidation = (path: string, reason: string): ToolError =>
  new ToolError({ message: `File validation failed for ${path}: ${reason}` })
