/**
 * OpenHands' browser tests open files through the file viewer: `goto("<url>/view?path=...")` with
 * the URL read from /tmp/oh-server-url. Here a LocalRuntime's server runs the viewer and a real
 * Chromium opens a PDF (drawn by the pdf.js the viewer serves) and a PNG.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { BrowserOutputObservation, Runtime } from "../../src/index.ts"
import { LocalRuntime } from "../../src/local.ts"
import { chromiumAvailable } from "../conformance/chromium.ts"
import { onePagePdf, solidPng } from "../server/viewerFixtures.ts"

const describeBrowser = chromiumAvailable() ? describe : describe.skip

describeBrowser("the file viewer in the browser", () => {
  it.live("browse_interactive goto shows a PDF rendered by pdf.js and a PNG, titled File Viewer - <name>", () => {
    const workspace = realpathSync(mkdtempSync(join(tmpdir(), "viewer-browser-")))
    const urlFile = join(tmpdir(), `file-viewer-url-${randomUUID()}`)
    writeFileSync(join(workspace, "report.pdf"), onePagePdf("Quarterly report"))
    writeFileSync(join(workspace, "logo.png"), solidPng(8, [0, 128, 255]))
    return Effect.gen(function*() {
      const rt = yield* Runtime
      // As an agent does: the URL from the file the server wrote.
      const url = (yield* rt.runCommand(`cat ${urlFile}`)).content
      assert.match(url, /^http:\/\/localhost:\d+$/)
      const pdf = yield* rt.browseInteractive(`goto("${url}/view?path=${workspace}/report.pdf")`)
      assert.instanceOf(pdf, BrowserOutputObservation, pdf.content)
      assert.include(pdf.content, "RootWebArea 'File Viewer - report.pdf'")
      // pdf.js loads as a module from the viewer and renders asynchronously: wait for the page's canvas.
      const rendered = yield* rt.browseInteractive("noop(1000)")
      assert.include(rendered.content, "image 'Page 1 of 1'", rendered.content)
      assert.notInclude(rendered.content, "Error loading file")
      const png = yield* rt.browseInteractive(`goto("${url}/view?path=${workspace}/logo.png")`)
      assert.include(png.content, "RootWebArea 'File Viewer - logo.png'")
      assert.include(png.content, "image 'logo.png'")
    }).pipe(
      Effect.provide(Layer.fresh(LocalRuntime.layer({
        workspace,
        browser: true,
        env: { EFFECT_SANDBOX_FILE_VIEWER_URL_FILE: urlFile }
      }))),
      Effect.ensuring(Effect.sync(() => rmSync(workspace, { recursive: true, force: true })))
    )
  }, 120_000)
})
