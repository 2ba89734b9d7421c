/**
 * Listing RunloopRuntime's devboxes. Runloop's list takes no metadata filter, so the devboxes
 * that can hold anything (running and suspended: Runloop keeps shut-down ones in its history) are
 * listed page by page through the SDK's cursor and picked by our metadata here.
 */
import type { Runloop } from "@runloop/api-client"
import { Effect, type Schedule } from "effect"
import { TAGS } from "../../hosted/ownerTags.ts"
import { runloopCall } from "./errors.ts"

/** The states a live devbox of ours can be found in. */
const LISTED = ["running", "suspended"] as const

/** Every running or suspended devbox carrying our marker and every entry of `metadata`. */
export const managedDevboxes = (
  api: Runloop,
  metadata: Readonly<Record<string, string>>,
  retry?: Schedule.Schedule<unknown>
) =>
  Effect.forEach(LISTED, (status) =>
    runloopCall(`list the ${status} devboxes`, async () => {
      const found: Array<Runloop.DevboxView> = []
      for await (const devbox of api.devboxes.list({ status, limit: 100 })) {
        const wanted = { [TAGS.managed]: "true", ...metadata }
        if (Object.entries(wanted).every(([k, v]) => devbox.metadata[k] === v)) found.push(devbox)
      }
      return found
    }, retry)).pipe(Effect.map((lists) => lists.flat()))
