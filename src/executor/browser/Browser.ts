/**
 * The session's browser (spec §2.6, §2.8): Chromium driven by playwright-core,
 * one browser context per session, launched on the first browser action and
 * closed with the session. `browse` opens a URL and returns the page as text;
 * `browse_interactive` runs BrowserGym actions and returns the accessibility
 * tree with bids. Both save a screenshot under the workspace's
 * `.browser_screenshots/`; a download yields a FileDownloadObservation.
 */
import { Effect, type Scope } from "effect"
import { mkdirSync, writeFileSync } from "node:fs"
import { isAbsolute, join } from "node:path"
import { pathToFileURL } from "node:url"
import type { Browser as PwBrowser, BrowserContext, CDPSession, Page } from "playwright-core"
import type { BrowseInteractiveAction, BrowseURLAction } from "../../schema/Action.ts"
import { BrowserOutputObservation, ErrorObservation, FileDownloadObservation } from "../../schema/Observation.ts"
import { withTimeout } from "../deadline.ts"
import { SESSION_MARKER_VARIABLE } from "../shell/processTree.ts"
import type { Workspace } from "../workspace.ts"
import { parseActions } from "./actionParser.ts"
import { bindAction, type BoundAction } from "./actionSet.ts"
import { axtreeText, type ElementProperties, markPage, readAXTree } from "./axtree.ts"
import { findChromium, NO_CHROMIUM_TEXT } from "./chromium.ts"
import { Downloads } from "./downloads.ts"
import { Navigations } from "./navigations.ts"
import { browseText, interactiveText } from "./observationText.ts"
import { pageText } from "./pageText.ts"
import { type ActionContext, errorText, runActions, type Tabs } from "./runActions.ts"

export interface BrowserOptions {
  /** The Chromium binary (default: `EFFECT_SANDBOX_CHROMIUM`, then Debian's chromium). */
  readonly executablePath?: string
  readonly workspace: Workspace
  /** The shell's working directory: relative `browse` URLs are files under it. */
  readonly cwd: () => string
  /** Marks the browser's processes as the session's, so they are reaped with it. */
  readonly marker: string
  readonly env: Readonly<Record<string, string>>
}

export interface Browser {
  readonly browse: (
    action: BrowseURLAction
  ) => Effect.Effect<BrowserOutputObservation | FileDownloadObservation | ErrorObservation>
  readonly browseInteractive: (
    action: BrowseInteractiveAction
  ) => Effect.Effect<BrowserOutputObservation | FileDownloadObservation | ErrorObservation>
}

/** How long an aborted navigation may take to turn into a download. */
const DOWNLOAD_GRACE_MS = 2_000

/** How long an interrupted action may take to end before the browser is closed under it. */
const INTERRUPT_GRACE_MS = 5_000

/** Navigation budget when the action sets no timeout. */
const DEFAULT_NAVIGATION_TIMEOUT_S = 30

const timeoutMs = (seconds: number | undefined) => (seconds ?? DEFAULT_NAVIGATION_TIMEOUT_S) * 1000

/** A launched browser with its one context and the tab the agent is on. */
interface Session {
  readonly browser: PwBrowser
  readonly context: BrowserContext
  readonly cdp: WeakMap<Page, CDPSession>
  readonly navigations: Navigations
  active: Page
}

/** `screenshot_<YYYYmmdd_HHMMSS_ffffff>.png` in local time, as OpenHands names them. */
const pad = (n: number, width = 2) => String(n).padStart(width, "0")

const screenshotName = (now: Date, sequence: number): string => {
  const date = `${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}`
  const time = `${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}`
  // Microseconds from the milliseconds plus a sequence number, so two shots never share a name.
  return `screenshot_${date}_${time}_${pad(now.getMilliseconds() * 1000 + (sequence % 1000), 6)}.png`
}

/** A URL as BrowserGym's `goto` gets it: with a scheme, or a file under the working directory. */
const absoluteUrl = (url: string, cwd: string): string =>
  /^[a-z][a-z0-9+.-]*:/i.test(url) ? url : pathToFileURL(isAbsolute(url) ? url : join(cwd, url)).href

export const makeBrowser = (options: BrowserOptions): Effect.Effect<Browser, never, Scope.Scope> =>
  Effect.gen(function*() {
    const ws = options.workspace
    const downloads = new Downloads(ws.root, ws.mountPath)
    let session: Session | null = null
    let shots = 0
    const watch = (page: Page) => page.on("download", (download) => downloads.track(download))

    const launch = async (): Promise<Session> => {
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
      const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 720 } })
      const started: Session = {
        browser,
        context,
        cdp: new WeakMap(),
        navigations: new Navigations(context),
        active: await context.newPage()
      }
      watch(started.active)
      // Pages the site opens (target=_blank, window.open) become the active tab, as in BrowserGym.
      context.on("page", (page) => {
        watch(page)
        started.active = page
      })
      browser.on("disconnected", () => {
        if (session === started) session = null
      })
      return started
    }

    const ensure = async (): Promise<Session> => (session ??= await launch())

    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        const open = session
        session = null
        await open?.browser.close().catch(() => undefined)
      })
    )

    const tabs = (s: Session): Tabs => ({
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

    const cdpOf = async (s: Session, page: Page): Promise<CDPSession> => {
      const known = s.cdp.get(page)
      if (known !== undefined) return known
      const cdp = await s.context.newCDPSession(page)
      s.cdp.set(page, cdp)
      return cdp
    }

    /**
     * Screenshot (saved and inline) and element properties of the active tab, with the page's
     * text and the accessibility tree only when the observation shows or returns them.
     */
    const observe = async (s: Session, want: { readonly pageText: boolean; readonly tree: boolean }) => {
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
      let screenshotPath: string | null = null
      if (shot !== null) {
        const name = screenshotName(new Date(), shots++)
        mkdirSync(join(ws.root, ".browser_screenshots"), { recursive: true })
        writeFileSync(join(ws.root, ".browser_screenshots", name), Buffer.from(shot, "base64"))
        screenshotPath = join(ws.mountPath, ".browser_screenshots", name)
      }
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

    const output = (
      view: Awaited<ReturnType<typeof observe>>,
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
        // OpenHands empties these unless the agent asked for the tree.
        axtreeObject: fields.returnAxtree && view.snapshot !== null ? { nodes: view.snapshot.nodes } : {},
        domObject: fields.returnAxtree && view.snapshot !== null ? { root: view.snapshot.dom } : {},
        extraElementProperties: fields.returnAxtree ? view.marked.properties : {},
        lastBrowserAction: fields.lastAction,
        lastBrowserActionError: fields.error,
        focusedElementBid: view.marked.focusedBid
      })

    /**
     * Stops an interrupted action: its tabs stop loading (Chromium cancels the navigation and
     * closes its connection), then the action, told by its aborted signal to do nothing more, is
     * awaited; one that does not end within the grace period takes the browser down with it
     * (launched again by the next action), so nothing it started goes on.
     */
    const stopAction = async (s: Session | null, running: Promise<unknown>) => {
      if (s !== null) {
        await Promise.all(
          s.context.pages().map((page) =>
            cdpOf(s, page).then((cdp) => cdp.send("Page.stopLoading")).catch(() => undefined)
          )
        )
      }
      if (await withTimeout(running, INTERRUPT_GRACE_MS) !== "timeout") return
      if (session === s) session = null
      await s?.browser.close().catch(() => undefined)
    }

    /**
     * Runs `body` with a launched browser; a browser that cannot start is an ErrorObservation.
     * Interrupted (`run`'s fiber, or the HTTP request that carries it), the action is stopped
     * (see `stopAction`) before the interruption completes: the next action starts on a quiet browser.
     */
    const withSession = <A>(body: (s: Session, signal: AbortSignal) => Promise<A>) =>
      Effect.callback<A | ErrorObservation>((resume, signal) => {
        let started: Session | null = null
        const running = ensure().then((s) => {
          started = s
          signal.throwIfAborted()
          return body(s, signal)
        }).catch((error: unknown) => new ErrorObservation({ content: errorText(error) }))
        void running.then((result) => resume(Effect.succeed(result)))
        return Effect.promise(() => stopAction(started, running))
      })

    /** The download an action caused, copied into the workspace, as OpenHands reports it. */
    const downloaded = async (actionText: string) => {
      const download = await downloads.collect()
      return download === null ? null : new FileDownloadObservation({
        content:
          `Execution of the previous action ${actionText} resulted in a file download. The downloaded file is saved at location: ${download.agentPath}`,
        filePath: download.agentPath
      })
    }

    const browse = (action: BrowseURLAction) =>
      withSession(async (s, signal) => {
        const url = absoluteUrl(action.url, options.cwd())
        const lastAction = `goto(${JSON.stringify(url)})`
        let error = ""
        try {
          const response = await s.active.goto(url, { timeout: timeoutMs(action.timeout) })
          if (response !== null && response.status() >= 400) {
            error = `HTTP ${response.status()} ${response.statusText()} for ${url}`.replace("  ", " ")
          }
        } catch (cause) {
          error = errorText(cause)
        }
        signal.throwIfAborted()
        const download = await downloaded(lastAction)
        if (download !== null) return download
        // The tree is read only when returned: `browse` shows the page text.
        const view = await observe(s, { pageText: true, tree: action.returnAxtree })
        return output(view, {
          content: browseText({ url: view.url, error, pageText: view.text }),
          trigger: "browse",
          lastAction,
          error,
          returnAxtree: action.returnAxtree
        })
      })

    const browseInteractive = (action: BrowseInteractiveAction) =>
      withSession(async (s, signal) => {
        let error = ""
        let bound: Array<BoundAction> = []
        try {
          bound = parseActions(action.browserActions).map(bindAction)
        } catch (cause) {
          error = errorText(cause)
        }
        const context: ActionContext = {
          tabs: tabs(s),
          navigationTimeoutMs: timeoutMs(action.timeout),
          signal,
          resolveFile: (path) => Effect.runPromise(ws.resolve(path, options.cwd()))
        }
        if (error === "") error = await runActions(bound, context)
        signal.throwIfAborted()
        // A click on a download link ends in a download, not a page: wait for its request to settle.
        await s.navigations.settled(context.navigationTimeoutMs)
        if (s.navigations.takeAborted()) await downloads.arrival(DOWNLOAD_GRACE_MS)
        const download = await downloaded(action.browserActions)
        if (download !== null) return download
        const view = await observe(s, { pageText: false, tree: true })
        return output(view, {
          content: interactiveText({
            url: view.url,
            focusedBid: view.marked.focusedBid,
            screenshotPath: view.screenshotPath,
            error,
            axtree: view.snapshot === null ? "" : axtreeText(view.snapshot, view.marked.properties)
          }),
          trigger: "browse_interactive",
          lastAction: action.browserActions,
          error,
          returnAxtree: action.returnAxtree
        })
      })

    return { browse, browseInteractive } satisfies Browser
  })
