/**
 * What the agent sees of the active tab after an action: a screenshot (saved under the
 * workspace's `.browser_screenshots/` and inline), the marked elements' properties, and, when the
 * observation shows or returns them, the page's text and accessibility tree; and that view as a
 * `BrowserOutputObservation`.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { BrowserOutputObservation } from "../../schema/Observation.ts"
import type { Workspace } from "../workspace.ts"
import { type ElementProperties, markPage, readAXTree } from "./axtree.ts"
import { pageText } from "./pageText.ts"
import { cdpOf, type Session } from "./session.ts"

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

/** `screenshot_<YYYYmmdd_HHMMSS_ffffff>.png` in local time, as OpenHands names them. */
const screenshotName = (now: Date, sequence: number): string => {
  const date = `${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}`
  const time = `${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}`
  // Microseconds from the milliseconds plus a sequence number, so two shots never share a name.
  return `screenshot_${date}_${time}_${pad(now.getMilliseconds() * 1000 + (sequence % 1000), 6)}.png`
}

/** The workspace's `.browser_screenshots/`, numbering the shots it saves so no two share a name. */
export class ScreenshotDir {
  #saved = 0
  readonly #ws: Workspace

  constructor(ws: Workspace) {
    this.#ws = ws
  }

  /** Saves a base64 PNG; gives its path as the agent sees it (under the mount path). */
  save(base64: string): string {
    const name = screenshotName(new Date(), this.#saved++)
    mkdirSync(join(this.#ws.root, ".browser_screenshots"), { recursive: true })
    writeFileSync(join(this.#ws.root, ".browser_screenshots", name), Buffer.from(base64, "base64"))
    return join(this.#ws.mountPath, ".browser_screenshots", name)
  }
}

/**
 * Screenshot (saved and inline) and element properties of the active tab, with the page's
 * text and the accessibility tree only when the observation shows or returns them.
 */
export const observe = async (
  s: Session,
  screenshots: ScreenshotDir,
  want: { readonly pageText: boolean; readonly tree: boolean }
) => {
  const page = s.active
  const cdp = await cdpOf(s, page)
  const marked = await markPage(page, want.pageText).catch(() => ({
    properties: {} as Record<string, ElementProperties>,
    focusedBid: "",
    html: ""
  }))
  // CDP's capture directly: Playwright's page.screenshot adds waits we do not need here.
  const [snapshot, shot] = await Promise.all([
    want.tree ? readAXTree(cdp).catch(() => null) : null,
    (cdp.send("Page.captureScreenshot", { format: "png", optimizeForSpeed: true }) as Promise<{ data: string }>)
      .then(
        ({ data }) => data,
        () => null
      )
  ])
  const screenshotPath = shot === null ? null : screenshots.save(shot)
  const pages = s.context.pages()
  return {
    url: page.url(),
    marked,
    snapshot,
    text: want.pageText ? await pageText(marked.html, page.url()) : "",
    screenshot: shot === null ? "" : `data:image/png;base64,${shot}`,
    screenshotPath,
    openPagesUrls: pages.map((p) => p.url()),
    activePageIndex: pages.indexOf(page)
  }
}

export type View = Awaited<ReturnType<typeof observe>>

/** The observation of `view`; OpenHands empties the tree's fields unless the agent asked for it. */
export const output = (
  view: View,
  fields: {
    readonly content: string
    readonly trigger: "browse" | "browse_interactive"
    readonly lastAction: string
    readonly error: string
    readonly returnAxtree: boolean
  }
) =>
  new BrowserOutputObservation({
    content: fields.content,
    url: view.url,
    triggerByAction: fields.trigger,
    screenshot: view.screenshot,
    screenshotPath: view.screenshotPath,
    error: fields.error !== "",
    openPagesUrls: view.openPagesUrls,
    activePageIndex: view.activePageIndex,
    axtreeObject: fields.returnAxtree && view.snapshot !== null ? { nodes: view.snapshot.nodes } : {},
    domObject: fields.returnAxtree && view.snapshot !== null ? { root: view.snapshot.dom } : {},
    extraElementProperties: fields.returnAxtree ? view.marked.properties : {},
    lastBrowserAction: fields.lastAction,
    lastBrowserActionError: fields.error,
    focusedElementBid: view.marked.focusedBid
  })
