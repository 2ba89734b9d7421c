/**
 * Browser rows of `npm run bench`: `browse` of a local page after warm-up (page
 * text, accessibility tree with bids, screenshot saved), beside Playwright's own
 * goto + aria snapshot in this process against the same Chromium and page.
 */
import { ManagedRuntime } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { chromium } from "playwright-core"
import { findChromium } from "../src/executor/browser/chromium.ts"
import { CliRuntime, Runtime } from "../src/index.ts"
import { type Sample, skipped, timeRuns } from "./stats.ts"

type Record = (name: string, sample: Sample, baseline: string, base: Sample, note?: string) => void

const RUNS = 50
const WARMUP = 10

/** A page of some substance: headings, paragraphs, 40 links, a form. */
const PAGE = "<html><head><title>Bench page</title></head><body><h1>Bench</h1>" +
  Array.from({ length: 40 }, (_, i) => `<p>Paragraph ${i} with <a href="/p${i}">link ${i}</a>.</p>`).join("") +
  "<form><input aria-label='Query'><button>Go</button></form></body></html>"

export const browserRows = async (record: Record) => {
  const executablePath = findChromium()
  if (executablePath === null) {
    skipped("browser rows skipped: no Chromium; apt install chromium")
    return
  }
  const server = createServer((_, res) => res.writeHead(200, { "content-type": "text/html" }).end(PAGE))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  try {
    const browser = await chromium.launch({ executablePath, chromiumSandbox: false })
    const page = await browser.newPage()
    const raw = await timeRuns(RUNS, WARMUP, async () => {
      await page.goto(url)
      await page.locator("body").ariaSnapshot()
    })
    await browser.close()

    const runtime = ManagedRuntime.make(CliRuntime.layer({ browser: { executablePath } }))
    const rt = await runtime.runPromise(Runtime)
    const browse = await timeRuns(RUNS, WARMUP, () => runtime.runPromise(rt.browse(url)))
    const interactive = await timeRuns(RUNS, WARMUP, () => runtime.runPromise(rt.browseInteractive("noop(0)")))
    await runtime.dispose()
    record(
      "Browser: browse a local page (CliRuntime)",
      browse,
      "Playwright goto + ariaSnapshot",
      raw,
      "target p50 <= 200 ms; adds screenshot, bids, page text"
    )
    record("Browser: browse_interactive noop(0)", interactive, "Playwright goto + ariaSnapshot", raw)
  } finally {
    server.close()
  }
}
