/**
 * Snapshot and fork for every hosted runtime, from a driver's `snapshot` verbs (services/Driver.ts):
 * a snapshot tagged with its owner (ownerTags.ts `snapshotTags`), removed with the runtime that
 * took it unless kept, reaped once its owner is gone; `fork(n)`, n runtimes of the same layer
 * started from one fresh snapshot, which is removed after them. A provider's own rules (what
 * survives, how long a snapshot lives) stay in its driver.
 */
import { Context, Effect, Layer, Scope } from "effect"
import { provisionedLayer } from "../provisioned/provisioned.ts"
import { unsupported } from "../runtime/unsupported.ts"
import { InvalidOptionsError, type ProviderError } from "../schema/errors.ts"
import { RuntimeSnapshotError, type Snapshot, type SnapshotOptions } from "../schema/snapshot.ts"
import type { DriverFailure, FoundSnapshot, SnapshotVerbs } from "../services/Driver.ts"
import type { ProvisionedSandbox, Provisioner } from "../services/Provisioner.ts"
import { Runtime } from "../services/Runtime.ts"
import type { HostedContext } from "./context.ts"
import type { HostedOptions } from "./options.ts"
import { snapshotTags, TAGS } from "./ownerTags.ts"

/** The verbs that do not touch a sandbox: enough to list, remove and reap snapshots. */
export type SnapshotStore = Pick<SnapshotVerbs<never>, "keeps" | "find" | "remove" | "unsupported">

/** A snapshot as the public handle says it. */
export const snapshotHandle = (provider: string, keeps: Snapshot["keeps"], found: FoundSnapshot): Snapshot => ({
  id: found.id,
  provider,
  keeps,
  sessionId: found.tags[TAGS.session] ?? "",
  createdAt: found.createdAt.toISOString(),
  kept: found.tags[TAGS.keepAlive] === "true"
})

/** A driver's failure as the snapshot's own error kind. */
const asSnapshotError = (operation: RuntimeSnapshotError["operation"]) => (error: DriverFailure | ProviderError) =>
  new RuntimeSnapshotError({
    operation,
    ...(error._tag === "ProviderError" ? { provider: error } : {}),
    message: error.message
  })

/** Remove a snapshot, logging a failure (a release never fails). */
const removeQuietly = (provider: string, verbs: SnapshotStore, id: string) =>
  verbs.remove(id).pipe(
    Effect.catch((error) => Effect.logWarning(`${provider}: snapshot ${id} not removed: ${error.message}`)),
    Effect.withSpan("hosted.snapshot.remove", { attributes: { provider, snapshot: id } })
  )

/**
 * The snapshot id a layer starts from (`fromSnapshot`), checked against the driver: a provider
 * without snapshots, or another provider's snapshot, is refused before anything is made.
 */
export const startingSnapshot = (
  runtime: string,
  provider: string,
  verbs: SnapshotStore | undefined,
  options: HostedOptions & { readonly workspace?: unknown }
): Effect.Effect<string | undefined, InvalidOptionsError> => {
  const from = options.fromSnapshot
  if (from === undefined) return Effect.succeed(undefined)
  const invalid = (why: string) =>
    Effect.fail(new InvalidOptionsError({ message: `${runtime} options: fromSnapshot: ${why}` }))
  if (verbs === undefined) return invalid(`${provider} keeps no snapshots (docs/snapshots.md).`)
  if (verbs.unsupported !== undefined) return invalid(`${provider} takes no snapshots here: ${verbs.unsupported}.`)
  // Filled from the snapshot, a directory of the user's would be overwritten.
  if (options.workspace !== undefined) return invalid("the snapshot brings its own workspace: leave workspace out.")
  if (typeof from === "string") return Effect.succeed(from)
  return from.provider === provider
    ? Effect.succeed(from.id)
    : invalid(`the snapshot ${from.id} was taken on ${from.provider}, not ${provider}.`)
}

/** How a hosted sandbox is provisioned (provisioner.ts `provisionHosted`, which calls this module). */
export type ProvisionWith = <O extends HostedOptions, S>(
  ctx: HostedContext<O, S>,
  onStatus: Parameters<Provisioner["provision"]>[0]
) => ReturnType<Provisioner["provision"]>

/**
 * `snapshot` and `fork` of one hosted sandbox, in the runtime's `scope`; refused at once where the
 * driver says why. Forks are provisioned `provision`'s way.
 */
export const snapshotVerbs = <O extends HostedOptions, S>(
  ctx: HostedContext<O, S>,
  sandbox: S,
  sessionId: string,
  scope: Scope.Scope,
  provision: ProvisionWith
): Pick<ProvisionedSandbox, "snapshot" | "fork"> => {
  const verbs = ctx.driver.snapshot
  if (verbs === undefined) return {}
  if (verbs.unsupported !== undefined) {
    const why = verbs.unsupported
    return { snapshot: () => unsupported(ctx.kind, "snapshot", why), fork: () => unsupported(ctx.kind, "fork", why) }
  }
  const refused = verbs.refusal?.(sandbox)
  if (refused !== undefined) {
    const fail = (operation: "snapshot" | "fork") =>
      Effect.fail(new RuntimeSnapshotError({ operation, message: refused }))
    return { snapshot: () => fail("snapshot"), fork: () => fail("fork") }
  }
  const take = (keep: boolean, operation: "snapshot" | "fork") =>
    verbs.take(sandbox, snapshotTags({ sessionId, keep })).pipe(
      Effect.map((found) => snapshotHandle(ctx.provider, verbs.keeps, found)),
      Effect.mapError(asSnapshotError(operation)),
      Effect.withSpan("hosted.snapshot.take", { attributes: { provider: ctx.provider } })
    )
  const remove = (snapshot: Snapshot) => removeQuietly(ctx.provider, verbs, snapshot.id)
  return {
    snapshot: ({ keep = false }: SnapshotOptions) =>
      // Registered in the runtime's scope as it is taken: an interrupted take leaves nothing behind.
      Effect.uninterruptible(
        take(keep, "snapshot").pipe(
          Effect.tap((snapshot) => keep ? Effect.void : Scope.addFinalizer(scope, remove(snapshot)))
        )
      ),
    fork: (count) =>
      Effect.gen(function*() {
        const snapshot = yield* Effect.acquireRelease(take(false, "fork"), remove)
        const layer = forkLayer(ctx, snapshot, provision)
        return yield* Effect.forEach(
          Array.from({ length: count }),
          () => Effect.map(Layer.build(layer), (built) => Context.get(built, Runtime)),
          { concurrency: "unbounded" }
        ).pipe(
          Effect.mapError((error) =>
            error._tag === "RuntimeStartError"
              ? error
              : new RuntimeSnapshotError({ operation: "fork", message: error.message })
          )
        )
      })
  }
}

/**
 * A layer of the same options starting from `snapshot` on the same driver (no new connection,
 * lease or reaper): a session of its own, and, where the workspace is a host directory, a temporary
 * one of its own filled from the snapshot (forks sharing one directory would not diverge).
 */
const forkLayer = <O extends HostedOptions, S>(
  ctx: HostedContext<O, S>,
  snapshot: Snapshot,
  provision: ProvisionWith
) => {
  const { sessionId: _, workspace: _w, keepWorkspace: _k, ...shared } = ctx.options as O & {
    readonly workspace?: unknown
    readonly keepWorkspace?: unknown
  }
  const options = { ...shared, fromSnapshot: snapshot } as unknown as O
  const provisioner: Provisioner = {
    kind: ctx.kind,
    provision: (onStatus) => provision({ ...ctx, options, attachOnly: false, fromSnapshot: snapshot.id }, onStatus)
  }
  return provisionedLayer(options, () => Effect.succeed(provisioner))
}

/** Our snapshots on the provider (the `managed` and `snapshot` tags), as handles, for a module's `listSnapshots`. */
export const listSnapshots = (provider: string, verbs: SnapshotStore) =>
  verbs.find({ [TAGS.managed]: "true", [TAGS.snapshot]: "true" }).pipe(
    Effect.map((listed) => listed.map((found) => snapshotHandle(provider, verbs.keeps, found))),
    Effect.mapError(asSnapshotError("list"))
  )

/** Remove one snapshot (a module's `removeSnapshot`): a kept one too; one already gone is no failure. */
export const removeSnapshot = (verbs: SnapshotStore, snapshot: Snapshot | string) =>
  verbs.remove(typeof snapshot === "string" ? snapshot : snapshot.id).pipe(Effect.mapError(asSnapshotError("remove")))
