/**
 * The browser itself: Chromium launched on first use with one context, the tab the agent is on,
 * and the one state the session keeps across actions, the launched browser or none
 * (`BrowserSlot`). A browser that disconnects (crashed, or closed under a stuck action) leaves the
 * slot empty, so the next action launches a new one.
 */
import type { Browser as PwBrowser, BrowserContext, CDPSession, Page } from "playwright-core"
import { SESSION_MARKER_VARIABLE } from "../shell/processTree.ts"
import { findChromium, NO_CHROMIUM_TEXT } from "./chromium.ts"
import type { Downloads } from "./downloads.ts"
import { Navigations } from "./navigations.ts"
import { pdfAsDownload } from "./pdfAsDownload.ts"
import { errorText, type Tabs } from "./runActions.ts"

/** A launched browser with its one context and the tab the agent is on. */
export interface Session {
  readonly browser: PwBrowser
  readonly context: BrowserContext
  readonly cdp: WeakMap<Page, CDPSession>
  readonly navigations: Navigations
  active: Page
}

export interface LaunchOptions {
  /** The Chromium binary (default: `EFFECT_SANDBOX_CHROMIUM`, then Debian's chromium). */
  readonly executablePath?: string | undefined
  /** Marks the browser's processes as the session's, so they are reaped with it. */
  readonly marker: string
  readonly env: Readonly<Record<string, string>>
  /** Every tab's downloads are tracked here. */
  readonly downloads: Downloads
}

const launch = async (options: LaunchOptions): Promise<Session> => {
  const executablePath = findChromium(options.executablePath, options.env)
  if (executablePath === null) throw new Error(NO_CHROMIUM_TEXT)
  // Loaded on first use: Playwright is megabytes of code a server without browsing never needs.
  const { chromium } = await import("playwright-core")
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    // The runtime is the sandbox (a container, or no isolation at all for Local/CLI).
    chromiumSandbox: false,
    env: { ...options.env, [SESSION_MARKER_VARIABLE]: options.marker }
  }).catch((error) => {
    throw new Error(`Browser could not start: ${errorText(error)}`)
  })
  const watch = (page: Page) => page.on("download", (download) => options.downloads.track(download))
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 720 } })
  const started: Session = {
    browser,
    context,
    cdp: new WeakMap(),
    navigations: new Navigations(context),
    active: await context.newPage()
  }
  watch(started.active)
  await cdpOf(started, started.active).then(pdfAsDownload)
  // Pages the site opens (target=_blank, window.open) become the active tab, as in BrowserGym.
  context.on("page", (page) => {
    watch(page)
    void cdpOf(started, page).then(pdfAsDownload).catch(() => undefined)
    started.active = page
  })
  return started
}

/** The session's browser, launched on demand; its transitions are the only writes to it. */
export class BrowserSlot {
  #current: Session | null = null
  readonly #options: LaunchOptions

  constructor(options: LaunchOptions) {
    this.#options = options
  }

  /** The launched browser, launching one if there is none. */
  async ensure(): Promise<Session> {
    if (this.#current !== null) return this.#current
    const started = await launch(this.#options)
    started.browser.on("disconnected", () => this.#forget(started))
    this.#current = started
    return started
  }

  /** Close `s` (when given) and empty the slot if it still holds it: the next action launches anew. */
  async discard(s: Session | null): Promise<void> {
    if (s === null) return
    this.#forget(s)
    await s.browser.close().catch(() => undefined)
  }

  /** Close whatever browser is launched (the session's end). */
  close(): Promise<void> {
    return this.discard(this.#current)
  }

  #forget(s: Session) {
    if (this.#current === s) this.#current = null
  }
}

/** The CDP session of `page`, opened once. */
export const cdpOf = async (s: Session, page: Page): Promise<CDPSession> => {
  const known = s.cdp.get(page)
  if (known !== undefined) return known
  const cdp = await s.context.newCDPSession(page)
  s.cdp.set(page, cdp)
  return cdp
}

/** The tab operations BrowserGym's actions use, on the session's context. */
export const tabsOf = (s: Session): Tabs => ({
  active: () => s.active,
  open: async () => {
    s.active = await s.context.newPage()
  },
  closeActive: async () => {
    await s.active.close()
    s.active = s.context.pages().at(-1) ?? await s.context.newPage()
  },
  focus: async (index) => {
    const page = s.context.pages()[index]
    if (page === undefined) throw new Error(`there is no tab ${index} (${s.context.pages().length} open)`)
    s.active = page
    await page.bringToFront()
  }
})
