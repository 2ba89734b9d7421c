/**
 * Navigation requests in flight in a browser context. An action such as a click
 * on a link returns once its navigation has started; if the response turns out
 * to be a download no page load follows, so the observation waits for the
 * navigation requests themselves to finish or fail. Chromium aborts the
 * navigation of a download (`net::ERR_ABORTED`) just before announcing the
 * download, so an aborted navigation says a download may be on its way.
 */
import type { BrowserContext, Request } from "playwright-core"
import { Wakeups } from "./wakeups.ts"

export class Navigations {
  readonly #inFlight = new Set<Request>()
  readonly #idle = new Wakeups()
  #aborted = false

  constructor(context: BrowserContext) {
    context.on("request", (request) => {
      if (request.isNavigationRequest()) this.#inFlight.add(request)
    })
    const done = (request: Request) => {
      if (this.#inFlight.delete(request) && this.#inFlight.size === 0) {
        this.#idle.wakeAll()
      }
    }
    context.on("requestfinished", done)
    context.on("requestfailed", (request) => {
      if (request.isNavigationRequest() && request.failure()?.errorText === "net::ERR_ABORTED") this.#aborted = true
      done(request)
    })
  }

  /** Whether a navigation was aborted since the last call (a download may follow). */
  takeAborted(): boolean {
    const aborted = this.#aborted
    this.#aborted = false
    return aborted
  }

  /** Resolves when no navigation request is in flight, or after `timeoutMs`. */
  settled(timeoutMs: number): Promise<void> {
    return this.#inFlight.size === 0 ? Promise.resolve() : this.#idle.wait(timeoutMs)
  }
}
