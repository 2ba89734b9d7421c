/**
 * The `Runtime`'s typed shortcuts (`runCommand`, `read`, `edit`, ...) over its `run`: each builds
 * its action from a string or a plain object (a bad field is a typed error, not a thrown
 * exception) and keeps its declared answer type true.
 */
import { Effect, type SchemaIssue } from "effect"
import * as Actions from "../schema/Action.ts"
import type { Action } from "../schema/Action.ts"
import { ANSWERS, answers } from "../schema/answers.ts"
import type { InvalidOptionsError, RuntimeError } from "../schema/errors.ts"
import { invalidOptions } from "../schema/issues.ts"
import { ErrorObservation, type Observation } from "../schema/Observation.ts"
import type { RuntimeShape } from "../services/Runtime.ts"

/** An action class, as the shortcuts that take its fields as a plain object use it. */
interface ActionClass<A extends Action> {
  new(...args: never): A
  readonly identifier: string
  readonly makeEffect: (input: never) => Effect.Effect<A, SchemaIssue.Issue>
}

/** The action itself, or built from a plain object: a bad field is a typed error, not a thrown exception. */
const actionOf = <A extends Action>(value: unknown, Class: ActionClass<A>): Effect.Effect<A, InvalidOptionsError> =>
  value instanceof Class
    ? Effect.succeed(value)
    : Effect.mapError(Class.makeEffect(value as never), (issue) => invalidOptions(Class.identifier, issue))

export type Shortcuts = Pick<
  RuntimeShape,
  "runCommand" | "runIPython" | "read" | "write" | "edit" | "browse" | "browseInteractive" | "callTool"
>

export const makeShortcuts = (
  kind: string,
  run: (action: Action) => Effect.Effect<Observation, RuntimeError>
): Shortcuts => {
  /**
   * Run, keeping the shortcut's type true: an observation that cannot answer the action (a
   * server answering out of turn, a mis-scripted TestRuntime step) becomes an ErrorObservation
   * saying so. `O` is the shortcut's declared answer.
   */
  const runAs = <O extends Observation>(action: Action): Effect.Effect<O | ErrorObservation, RuntimeError> =>
    Effect.map(run(action), (observation) =>
      answers(action, observation)
        ? observation as O | ErrorObservation
        : new ErrorObservation({
          content: `The ${kind} runtime answered a ${action._tag} with a ${observation._tag}, not a ${
            ANSWERS[action._tag].join(" or ")
          }.`
        }))

  return {
    runCommand: (command) =>
      Effect.flatMap(
        actionOf(typeof command === "string" ? new Actions.CmdRunAction({ command }) : command, Actions.CmdRunAction),
        (action) => runAs(action)
      ),
    runIPython: (code) => runAs(typeof code === "string" ? new Actions.IPythonRunCellAction({ code }) : code),
    read: (path) => runAs(typeof path === "string" ? new Actions.FileReadAction({ path }) : path),
    write: (file) => Effect.flatMap(actionOf(file, Actions.FileWriteAction), (action) => runAs(action)),
    edit: (edit) => Effect.flatMap(actionOf(edit, Actions.FileEditAction), (action) => runAs(action)),
    browse: (url) => runAs(typeof url === "string" ? new Actions.BrowseURLAction({ url }) : url),
    browseInteractive: (actions) =>
      runAs(typeof actions === "string" ? new Actions.BrowseInteractiveAction({ browserActions: actions }) : actions),
    callTool: (call) =>
      runAs(
        call instanceof Actions.McpCallAction
          ? call
          : new Actions.McpCallAction({ name: call.name, arguments: call.arguments ?? {} })
      )
  }
}
