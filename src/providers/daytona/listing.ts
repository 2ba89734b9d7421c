/**
 * Daytona's sandboxes with given labels. The SDK's `list` asks for each listed sandbox's toolbox
 * URL by id before it yields it, so a sandbox destroyed between the page and that ask fails the
 * whole listing with a 404 (a reaper or a release running beside the listing is enough). That is
 * not an error of the listing: list again, a few times, and the destroyed sandbox is gone from
 * the page.
 */
import type { Daytona, Sandbox } from "@daytonaio/sdk"

/** How many times a listing is taken again after a sandbox vanished under it. */
const ATTEMPTS = 3

const vanished = (error: unknown) =>
  typeof error === "object" && error !== null && (error as { statusCode?: unknown }).statusCode === 404

export const listSandboxes = async (
  client: Daytona,
  labels: Readonly<Record<string, string>>
): Promise<Array<Sandbox>> => {
  for (let attempt = 1;; attempt++) {
    try {
      const found: Array<Sandbox> = []
      for await (const sandbox of client.list({ labels: { ...labels } })) found.push(sandbox)
      return found
    } catch (error) {
      if (attempt >= ATTEMPTS || !vanished(error)) throw error
    }
  }
}
