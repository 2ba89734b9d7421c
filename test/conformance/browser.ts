/**
 * Browsing (spec §2.6, §2.8) for runtimes with the browser: a small site
 * (fixtures/site.py) is served from inside the sandbox on 127.0.0.1, so a
 * container reaches it exactly as the host-side runtimes do.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import {
  BrowseInteractiveAction,
  BrowserOutputObservation,
  BrowseURLAction,
  CmdRunAction,
  FileDownloadObservation,
  FileReadObservation,
  type Observation,
  type RuntimeShape
} from "../../src/index.ts"
import { withRuntime } from "./helpers.ts"
import { type ConformanceTarget, toolTitle } from "./target.ts"

const SITE = readFileSync(join(import.meta.dirname, "fixtures", "site.py"), "utf8")

const AXTREE_BEGIN = "============== BEGIN accessibility tree =============="
const ERROR_BEGIN = "================ BEGIN error message ===============\n" +
  "The following error occurred when executing the last action:\n"

/** Starts the site in the sandbox; returns its base URL and a port nothing listens on. */
const startSite = (rt: RuntimeShape) =>
  Effect.gen(function*() {
    yield* rt.write({ path: "site/site.py", content: SITE })
    // Blocking: the suite's 1 s no-output timeout must not cut the wait for a slow start short.
    const started = yield* rt.run(
      new CmdRunAction({
        command: "(python3 site/site.py site/port >/dev/null 2>&1 &); " +
          "for i in $(seq 300); do [ -s site/port ] && break; sleep 0.1; done; cat site/port",
        blocking: true,
        timeout: 60
      })
    )
    const [port, closed] = started.content.trim().split(" ")
    assert.match(port ?? "", /^\d+$/, started.content)
    return { base: `http://127.0.0.1:${port}`, closed: `http://127.0.0.1:${closed}` }
  })

const asBrowserOutput = (obs: Observation): BrowserOutputObservation => {
  assert.instanceOf(obs, BrowserOutputObservation, obs.content)
  return obs as BrowserOutputObservation
}

/** The bid the accessibility tree shows for `role 'name'`. */
const bidOf = (tree: string, role: string, name: string): string => {
  const found = new RegExp(`\\[(\\w+)\\] ${role} '${name}'`).exec(tree)
  assert.isNotNull(found, `no ${role} '${name}' in:\n${tree}`)
  return found![1]!
}

/** Runs `f` with a runtime that browses and a site to browse. */
const withBrowser = <A, E>(
  target: ConformanceTarget,
  f: (rt: RuntimeShape, site: { readonly base: string; readonly closed: string }) => Effect.Effect<A, E>
) =>
  withRuntime(target, (rt) =>
    Effect.gen(function*() {
      yield* f(rt, yield* startSite(rt))
    }))

/**
 * Each test starts a site and a Chromium in the sandbox: ~13 s on an idle machine, 23 s seen in
 * CI's parallel group, so the suite's 30 s default leaves too little room there.
 */
const BROWSER_TEST_TIMEOUT = 90_000

export const browserConformance = (target: ConformanceTarget) =>
  describe(toolTitle(target, "browser"), { timeout: BROWSER_TEST_TIMEOUT }, () => {
    const live = it.live.skipIf(!target.capabilities.browser)
    live(
      "browses a page: its text with absolute links, a saved screenshot, the tree on request",
      () =>
        withBrowser(target, (rt, site) =>
          Effect.gen(function*() {
            const obs = asBrowserOutput(yield* rt.browse(site.base + "/"))
            assert.strictEqual(
              obs.content,
              `[Current URL: ${site.base}/]\n` +
                "============== BEGIN webpage content ==============\n" +
                "# Welcome home\n\n" +
                `Plain **bold** words and a [Form page](${site.base}/form) link.\n\n` +
                `the logo[Get the report](${site.base}/report.pdf)\n` +
                "============== END webpage content ==============\n"
            )
            assert.strictEqual(obs.error, false)
            assert.strictEqual(obs.url, `${site.base}/`)
            assert.strictEqual(obs.triggerByAction, "browse")
            assert.strictEqual(obs.lastBrowserAction, `goto("${site.base}/")`)
            assert.match(obs.screenshot, /^data:image\/png;base64,iVBORw0KGgo/)
            assert.match(
              obs.screenshotPath ?? "",
              /^.+\/\.browser_screenshots\/screenshot_\d{8}_\d{6}_\d{6}\.png$/
            )
            // The screenshot is a PNG file in the workspace.
            const listed = yield* rt.listFiles(".browser_screenshots")
            assert.strictEqual(listed.length, 1)
            // Without returnAxtree the structured tree is left out, as in OpenHands.
            assert.deepStrictEqual(obs.axtreeObject, {})
            const withTree = asBrowserOutput(
              yield* rt.browse(new BrowseURLAction({ url: site.base, returnAxtree: true }))
            )
            const nodes = (withTree.axtreeObject as { nodes: Array<{ role?: { value: string } }> }).nodes
            assert.isTrue(nodes.some((node) => node.role?.value === "heading"))
            assert.isNotEmpty(Object.keys(withTree.extraElementProperties))
          }))
    )

    live(
      "clicks a link by the bid its tree shows, and goes back",
      () =>
        withBrowser(target, (rt, site) =>
          Effect.gen(function*() {
            yield* rt.browse(site.base)
            const start = asBrowserOutput(yield* rt.browseInteractive("noop(0)"))
            assert.include(start.content, "[Action executed successfully.]\n" + AXTREE_BEGIN)
            assert.include(start.content, "heading 'Welcome home'")
            const link = bidOf(start.content, "link", "Form page")
            const clicked = asBrowserOutput(yield* rt.browseInteractive(`click("${link}")`))
            assert.strictEqual(clicked.url, `${site.base}/form`)
            assert.isTrue(clicked.content.startsWith(`[Current URL: ${site.base}/form]\n[Focused element bid: `))
            assert.include(clicked.content, "heading 'Search'")
            const back = asBrowserOutput(yield* rt.browseInteractive("go_back()"))
            assert.strictEqual(back.url, `${site.base}/`)
            assert.strictEqual(back.error, false)
          }))
    )

    live(
      "fills a form, picks an option and submits it",
      () =>
        withBrowser(target, (rt, site) =>
          Effect.gen(function*() {
            const form = asBrowserOutput(yield* rt.browse(`${site.base}/form`))
            assert.strictEqual(form.content.split("\n")[2], "# Search")
            const tree = asBrowserOutput(yield* rt.browseInteractive("noop(0)")).content
            const actions = [
              `fill("${bidOf(tree, "textbox", "Query")}", "cats & dogs")`,
              `select_option("${bidOf(tree, "combobox", "Color")}", "blue")`,
              `click("${bidOf(tree, "button", "Send")}")`
            ].join("\n")
            const result = asBrowserOutput(yield* rt.run(new BrowseInteractiveAction({ browserActions: actions })))
            assert.strictEqual(result.error, false, result.content)
            assert.strictEqual(result.url, `${site.base}/result?q=cats+%26+dogs&color=blue`)
            assert.include(result.content, "heading 'You searched for cats & dogs in blue'")
          }))
    )

    live(
      "saves a download into the workspace as file_<n> with the type's extension",
      () =>
        withBrowser(target, (rt, site) =>
          Effect.gen(function*() {
            yield* rt.browse(site.base)
            const tree = asBrowserOutput(yield* rt.browseInteractive("noop(0)")).content
            const actions = `click("${bidOf(tree, "link", "Get the report")}")`
            const obs = yield* rt.browseInteractive(actions)
            assert.instanceOf(obs, FileDownloadObservation, obs.content)
            const path = `${rt.info.workspace}/file_1.pdf`
            assert.strictEqual(
              obs.content,
              `Execution of the previous action ${actions} resulted in a file download. The downloaded file is saved at location: ${path}`
            )
            assert.strictEqual((obs as FileDownloadObservation).filePath, path)
            // A .pdf is read back as a data URL (OpenHands' read of PDFs and images).
            const saved = yield* rt.read(path)
            assert.instanceOf(saved, FileReadObservation, saved.content)
            assert.strictEqual(
              saved.content,
              `data:application/pdf;base64,${Buffer.from("%PDF-1.4\n% conformance\n").toString("base64")}`
            )
          }))
    )

    live(
      "navigating to a PDF downloads it (OpenHands' download observation), not Chromium's PDF viewer",
      () =>
        withBrowser(target, (rt, site) =>
          Effect.gen(function*() {
            const url = `${site.base}/paper.pdf`
            const notice = (action: string, n: number) =>
              `Execution of the previous action ${action} resulted in a file download. The downloaded file is saved at location: ${rt.info.workspace}/file_${n}.pdf`
            const actions = `goto("${url}")`
            const viaGoto = yield* rt.browseInteractive(actions)
            assert.instanceOf(viaGoto, FileDownloadObservation, viaGoto.content)
            assert.strictEqual(viaGoto.content, notice(actions, 1))
            assert.strictEqual((viaGoto as FileDownloadObservation).filePath, `${rt.info.workspace}/file_1.pdf`)
            // `browse` is a goto too.
            const viaBrowse = yield* rt.browse(url)
            assert.instanceOf(viaBrowse, FileDownloadObservation, viaBrowse.content)
            assert.strictEqual(viaBrowse.content, notice(`goto(${JSON.stringify(url)})`, 2))
            const saved = yield* rt.read(`${rt.info.workspace}/file_2.pdf`)
            assert.strictEqual(
              saved.content,
              `data:application/pdf;base64,${Buffer.from("%PDF-1.4\n% paper\n").toString("base64")}`
            )
            // An HTML page after it is still a page.
            const page = asBrowserOutput(yield* rt.browse(site.base))
            assert.strictEqual(page.error, false, page.content)
          }))
    )

    live(
      "reports a 404 and an unreachable server as errors, with the page still observed",
      () =>
        withBrowser(target, (rt, site) =>
          Effect.gen(function*() {
            const missing = asBrowserOutput(yield* rt.browse(`${site.base}/nowhere`))
            assert.strictEqual(missing.error, true)
            assert.strictEqual(missing.lastBrowserActionError, `HTTP 404 Not Found for ${site.base}/nowhere`)
            assert.strictEqual(
              missing.content,
              `[Current URL: ${site.base}/nowhere]\n${ERROR_BEGIN}HTTP 404 Not Found for ${site.base}/nowhere\n` +
                "================ END error message ===============\n" +
                "============== BEGIN webpage content ==============\n# Nothing here\n" +
                "============== END webpage content ==============\n"
            )
            const refused = asBrowserOutput(yield* rt.browse(site.closed))
            assert.strictEqual(refused.error, true)
            assert.strictEqual(
              refused.lastBrowserActionError,
              `page.goto: net::ERR_CONNECTION_REFUSED at ${site.closed}/`
            )
          }))
    )

    live(
      "refuses malformed actions, unknown bids and unknown actions without running any",
      () =>
        withBrowser(target, (rt, site) =>
          Effect.gen(function*() {
            yield* rt.browse(`${site.base}/form`)
            const error = (actions: string) =>
              rt.browseInteractive(actions).pipe(
                Effect.map((obs) => {
                  const out = asBrowserOutput(obs)
                  assert.strictEqual(out.error, true)
                  assert.include(out.content, ERROR_BEGIN + out.lastBrowserActionError + "\n")
                  return out.lastBrowserActionError
                })
              )
            // The first line is valid but nothing runs: the page stays where it was.
            assert.strictEqual(
              yield* error(`goto("${site.base}/")\nclick(`),
              "SyntaxError: expected a value but found end of input (line 2, column 7)"
            )
            assert.strictEqual(
              yield* error("exec(\"import os; os.system('touch pwned')\")"),
              "NameError: 'exec' is not a browser action; the actions are goto, go_back, go_forward, noop, click, dblclick, hover, fill, select_option, press, focus, clear, drag_and_drop, scroll, upload_file, new_tab, tab_close, tab_focus, send_msg_to_user, report_infeasible"
            )
            assert.strictEqual(yield* error(`click("9999")`), `click("9999"): Could not find element with bid "9999"`)
            const still = asBrowserOutput(yield* rt.browseInteractive("noop(0)"))
            assert.strictEqual(still.url, `${site.base}/form`)
          }))
    )
  })
