/**
 * The browser beyond the conformance cases: tabs, uploads, relative URLs, start
 * failures, and that Chromium's processes go with the runtime. Pages are served
 * by this test on 127.0.0.1 (CliRuntime browses from this machine).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import {
  BrowserOutputObservation,
  CliRuntime,
  ErrorObservation,
  type Observation,
  Runtime,
  type RuntimeShape
} from "../../src/index.ts"
import { chromiumAvailable } from "../conformance/chromium.ts"

const PAGES: Record<string, string> = {
  "/": "<title>One</title><h1>First tab</h1><a href='/two' target='_blank'>Open two</a>",
  "/two": "<title>Two</title><h1>Second tab</h1>",
  "/late-link": "<title>Late</title><button disabled>Never</button><a href='/late'>Go late</a>",
  "/late": "<title>Arrived</title><h1>Arrived late</h1>",
  "/upload": "<title>Upload</title><input type='file' aria-label='Pick' " +
    "onchange=\"document.querySelector('h2').textContent = 'chose ' + this.files[0].name\"><h2>none</h2>"
}

/** How long `/late` takes to answer: longer than a click's element timeout (3 s, runActions.ts). */
const LATE_MS = 4_000

/** Serves PAGES on 127.0.0.1 for the scope. */
const site = Effect.acquireRelease(
  Effect.promise(() =>
    new Promise<ReturnType<typeof createServer>>((resolve) => {
      const server = createServer((req, res) =>
        setTimeout(
          () => res.writeHead(200, { "content-type": "text/html" }).end(PAGES[req.url ?? "/"] ?? ""),
          req.url === "/late" ? LATE_MS : 0
        )
      )
      server.listen(0, "127.0.0.1", () => resolve(server))
    })
  ),
  (server) => Effect.sync(() => server.close())
).pipe(Effect.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`))

const withBrowser = <A, E>(f: (rt: RuntimeShape, base: string) => Effect.Effect<A, E>, options = {}) =>
  Effect.gen(function*() {
    return yield* f(yield* Runtime, yield* site)
  }).pipe(Effect.scoped, Effect.provide(Layer.fresh(CliRuntime.layer({ browser: true, ...options }))))

const output = (obs: Observation) => {
  assert.instanceOf(obs, BrowserOutputObservation, obs.content)
  return obs as BrowserOutputObservation
}

/** PIDs of processes carrying this marker value in their environment. */
const markedProcesses = (marker: string): Array<number> =>
  readdirSync("/proc").filter((name) => /^\d+$/.test(name)).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(`EFFECT_SANDBOX_SESSION=${marker}`)
    } catch {
      return false
    }
  }).map(Number)

const describeBrowser = chromiumAvailable() ? describe : describe.skip

describe("browser off or broken", () => {
  it.live("a runtime without the browser answers with OpenHands' text", () =>
    Effect.gen(function*() {
      const rt = yield* Runtime
      assert.isFalse(rt.info.capabilities.browser)
      const obs = yield* rt.browseInteractive("noop(0)")
      assert.instanceOf(obs, ErrorObservation)
      assert.strictEqual(obs.content, "Browser functionality is not supported or disabled.")
    }).pipe(Effect.provide(Layer.fresh(CliRuntime.layer()))))

  it.live("a Chromium that cannot start is an ErrorObservation, and the runtime goes on", () =>
    Effect.gen(function*() {
      const rt = yield* Runtime
      const obs = yield* rt.browse("http://127.0.0.1:9/")
      assert.instanceOf(obs, ErrorObservation)
      assert.match(obs.content, /^Browser could not start: browserType\.launch: Failed to launch chromium/)
      assert.strictEqual((yield* rt.runCommand("echo still here")).content, "still here")
    }).pipe(Effect.provide(Layer.fresh(CliRuntime.layer({ browser: { executablePath: "/nonexistent/chromium" } })))))
})

describeBrowser("browser", () => {
  it.live("follows a link into a new tab, focuses and closes tabs", () =>
    withBrowser((rt, base) =>
      Effect.gen(function*() {
        yield* rt.browse(base)
        const first = output(yield* rt.browseInteractive("noop(0)"))
        const link = /\[(\d+)\] link 'Open two'/.exec(first.content)![1]
        const opened = output(yield* rt.browseInteractive(`click("${link}")`))
        assert.strictEqual(opened.url, `${base}/two`)
        assert.deepStrictEqual(opened.openPagesUrls, [`${base}/`, `${base}/two`])
        assert.strictEqual(opened.activePageIndex, 1)
        const back = output(yield* rt.browseInteractive("tab_focus(0)"))
        assert.strictEqual(back.url, `${base}/`)
        assert.strictEqual(back.activePageIndex, 0)
        const closed = output(yield* rt.browseInteractive("tab_focus(1)\ntab_close()"))
        assert.deepStrictEqual(closed.openPagesUrls, [`${base}/`])
        const missing = output(yield* rt.browseInteractive("tab_focus(5)"))
        assert.strictEqual(missing.lastBrowserActionError, "tab_focus(5): there is no tab 5 (1 open)")
        const fresh = output(yield* rt.browseInteractive(`new_tab()\nsend_msg_to_user("done")`))
        assert.deepStrictEqual(fresh.openPagesUrls, [`${base}/`, "about:blank"])
      })
    ))

  it.live(
    "a click whose page answers after the element timeout has clicked: it waits for the page, no error",
    () =>
      withBrowser((rt, base) =>
        Effect.gen(function*() {
          yield* rt.browse(`${base}/late-link`)
          const tree = output(yield* rt.browseInteractive("noop(0)")).content
          // An element that never becomes clickable still fails after the element timeout.
          const never = /\[(\d+)\] button 'Never'/.exec(tree)?.[1] ?? assert.fail(tree)
          const refused = output(yield* rt.browseInteractive(`click("${never}")`))
          assert.match(refused.lastBrowserActionError, /^click\("\d+"\): locator\.click: Timeout 3000ms exceeded\.$/)
          const link = /\[(\d+)\] link 'Go late'/.exec(tree)?.[1] ?? assert.fail(tree)
          const started = Date.now()
          const arrived = output(yield* rt.browseInteractive(`click("${link}")`))
          assert.isAtLeast(Date.now() - started, LATE_MS)
          assert.strictEqual(arrived.error, false, arrived.content)
          assert.strictEqual(arrived.url, `${base}/late`)
          assert.include(arrived.content, "heading 'Arrived late'")
        })
      ),
    30_000
  )

  it.live("uploads a workspace file through a file input", () =>
    withBrowser((rt, base) =>
      Effect.gen(function*() {
        yield* rt.write({ path: "notes.txt", content: "hello" })
        yield* rt.browse(`${base}/upload`)
        const tree = output(yield* rt.browseInteractive("noop(0)")).content
        const input = /\[(\d+)\] button 'Pick'/.exec(tree)?.[1] ?? assert.fail(tree)
        const done = output(yield* rt.browseInteractive(`upload_file("${input}", "notes.txt")`))
        assert.strictEqual(done.error, false, done.content)
        assert.include(done.content, "heading 'chose notes.txt'")
      })
    ))

  it.live("opens a URL without a scheme as a file under the shell's working directory", () =>
    withBrowser((rt) =>
      Effect.gen(function*() {
        yield* rt.runCommand("mkdir -p site && cd site && printf '<h1>Local file</h1>' > page.html")
        const obs = output(yield* rt.browse("page.html"))
        assert.strictEqual(obs.url, `file://${rt.info.workspace}/site/page.html`)
        assert.include(obs.content, "# Local file")
      })
    ))

  it.live("Chromium's processes carry the session's marker and go with the runtime", () =>
    Effect.gen(function*() {
      let marker = ""
      yield* withBrowser((rt, base) =>
        Effect.gen(function*() {
          marker = `${rt.info.id}/browser`
          assert.deepStrictEqual(markedProcesses(marker), [])
          yield* rt.browse(base)
          assert.isAbove(markedProcesses(marker).length, 1)
        })
      )
      for (let waited = 0; markedProcesses(marker).length > 0 && waited < 5_000; waited += 50) {
        yield* Effect.sleep("50 millis")
      }
      assert.deepStrictEqual(markedProcesses(marker), [])
    }))
})
