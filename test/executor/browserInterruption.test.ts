/**
 * An interrupted `browse_interactive` ends at once even in the middle of a long
 * `noop` wait, and keeps the browser: the tab is still on its page afterwards
 * (a browser closed and launched again would show `about:blank`).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { BrowserOutputObservation, CliRuntime, Runtime } from "../../src/index.ts"
import { chromiumAvailable } from "../conformance/chromium.ts"
import { hangingSite } from "../conformance/interruption.ts"

describe("interrupting the browser", () => {
  it.live.skipIf(!chromiumAvailable())(
    "a long noop ends with the interruption, and the tab stays",
    () =>
      Effect.gen(function*() {
        const rt = yield* Runtime
        const site = yield* hangingSite
        yield* rt.browse(`${site.base}/good`)
        const fiber = yield* Effect.forkChild(rt.browseInteractive("noop(60000)"))
        yield* Effect.sleep("500 millis")
        const begun = Date.now()
        yield* Fiber.interrupt(fiber)
        assert.isBelow(Date.now() - begun, 1_000)
        const after = yield* rt.browseInteractive("noop(0)")
        assert.instanceOf(after, BrowserOutputObservation, after.content)
        assert.strictEqual((after as BrowserOutputObservation).url, `${site.base}/good`)
      }).pipe(Effect.scoped, Effect.provide(Layer.fresh(CliRuntime.layer({ browser: true })))),
    30_000
  )
})
