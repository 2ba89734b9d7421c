/**
 * Modal sandboxes as ModalRuntime finds them: listed by tags (`SandboxList` filters on them, but
 * answers ids only), each then read for its own tags, which carry our session, owner and key.
 */
import { Effect, type Schedule } from "effect"
import type { App, ModalClient, Sandbox } from "modal"
import { modalCall } from "./sdk.ts"

/** A running sandbox and its tags. */
export interface TaggedSandbox {
  readonly sandbox: Sandbox
  readonly tags: Readonly<Record<string, string>>
}

/** The running sandboxes of `app` carrying every one of `tags` (at most `limit`), with all their tags. */
export const sandboxesTagged = Effect.fn("ModalRuntime.sandboxesTagged")(function*(
  client: ModalClient,
  app: App,
  tags: Readonly<Record<string, string>>,
  retry: Schedule.Schedule<unknown>,
  limit = Infinity
) {
  const listed = yield* modalCall("list sandboxes by tag", async () => {
    const found: Array<Sandbox> = []
    for await (const sandbox of client.sandboxes.list({ appId: app.appId, tags: { ...tags } })) {
      found.push(sandbox)
      if (found.length >= limit) break
    }
    return found
  }, retry)
  return yield* Effect.forEach(
    listed,
    (sandbox) =>
      modalCall(`read the tags of sandbox ${sandbox.sandboxId}`, () => sandbox.getTags(), retry).pipe(
        Effect.map((found): TaggedSandbox => ({ sandbox, tags: found }))
      )
  )
})

/** Terminate a sandbox; a failure is logged (it may be gone already), never fatal. */
export const terminate = (sandbox: Sandbox, retry: Schedule.Schedule<unknown>) =>
  modalCall(`terminate sandbox ${sandbox.sandboxId}`, () => sandbox.terminate(), retry).pipe(
    Effect.catch((error) => Effect.logWarning(error.message))
  )
