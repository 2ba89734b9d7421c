/**
 * `effect-sandbox/promise`: the Promise API, for code that is not written in Effect. A `Sandbox`
 * on any runtime (by name, or by an Effect API layer), `commands.run`, `files.read/write/list`,
 * `close()` and `await using`; failures are thrown `SandboxError`s that keep the typed error's
 * `_tag`. See docs/promise-api.md.
 */
export type { CommandResult, RunOptions } from "./promise/commands.ts"
export { FileError, SandboxError, type TaggedFailure } from "./promise/errors.ts"
export { Sandbox } from "./promise/Sandbox.ts"
export type { RuntimeLayer, RuntimeName, RuntimeOptionsByName } from "./runtime/byName.ts"
export type { Snapshot, SnapshotOptions } from "./schema/snapshot.ts"
