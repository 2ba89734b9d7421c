/**
 * `effect-sandbox/local`: LocalRuntime, the action execution server as a local process.
 *
 * A subpath of its own, like every runtime but CliRuntime and TestRuntime (DESIGN.md principle 11):
 * importing the root `effect-sandbox` does not load it.
 */
export {
  LocalRuntime,
  type LocalRuntimeOptions,
  type LocalServerOptions,
  LocalServerPool
} from "./layers/LocalRuntime.ts"
