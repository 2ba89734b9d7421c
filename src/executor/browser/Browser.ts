/**
 * The session's browser (spec §2.6, §2.8): Chromium driven by playwright-core,
 * one browser context per session, launched on the first browser action and
 * closed with the session. `browse` opens a URL and returns the page as text;
 * `browse_interactive` runs BrowserGym actions and returns the accessibility
 * tree with bids. Both save a screenshot under the workspace's
 * `.browser_screenshots/`; a download yields a FileDownloadObservation.
 *
 * The launched browser and its tabs are `session.ts`, what an action's
 * observation shows is `observe.ts`; this module runs the actions.
 */
import { Effect, type Scope } from "effect"
import { isAbsolute, join } from "node:path"
import { pathToFileURL } from "node:url"
import type { BrowseInteractiveAction, BrowseURLAction } from "../../schema/Action.ts"
import { type BrowserOutputObservation, ErrorObservation, FileDownloadObservation } from "../../schema/Observation.ts"
import { withTimeout } from "../deadline.ts"
import type { Workspace } from "../workspace.ts"
import { parseActions } from "./actionParser.ts"
import { bindAction, type BoundAction } from "./actionSet.ts"
import { axtreeText } from "./axtree.ts"
import { Downloads } from "./downloads.ts"
import { browseText, interactiveText } from "./observationText.ts"
import { observe, output, ScreenshotDir } from "./observe.ts"
import { type ActionContext, errorText, runActions } from "./runActions.ts"
import { BrowserSlot, cdpOf, type Session, tabsOf } from "./session.ts"

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

/** A URL as BrowserGym's `goto` gets it: with a scheme, or a file under the working directory. */
const absoluteUrl = (url: string, cwd: string): string =>
  /^[a-z][a-z0-9+.-]*:/i.test(url) ? url : pathToFileURL(isAbsolute(url) ? url : join(cwd, url)).href

export const makeBrowser = (options: BrowserOptions): Effect.Effect<Browser, never, Scope.Scope> =>
  Effect.gen(function*() {
    const ws = options.workspace
    const downloads = new Downloads(ws.root, ws.mountPath)
    const slot = new BrowserSlot({
      executablePath: options.executablePath,
      marker: options.marker,
      env: options.env,
      downloads
    })
    const screenshots = new ScreenshotDir(ws)
    // Closing never rejects (a browser already gone is closed).
    yield* Effect.addFinalizer(() => Effect.promise(() => slot.close()))

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
      await slot.discard(s)
    }

    /**
     * Runs `body` with a launched browser; a browser that cannot start is an ErrorObservation.
     * Interrupted (`run`'s fiber, or the HTTP request that carries it), the action is stopped
     * (see `stopAction`) before the interruption completes: the next action starts on a quiet browser.
     */
    const withSession = <A>(body: (s: Session, signal: AbortSignal) => Promise<A>) =>
      Effect.callback<A | ErrorObservation>((resume, signal) => {
        let started: Session | null = null
        const running = slot.ensure().then((s) => {
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

    const browse = Effect.fn("Browser.browse")(function*(action: BrowseURLAction) {
      return yield* withSession(async (s, signal) => {
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
        // A download aborts the navigation (`goto` fails with "Download is starting"): wait for it to start.
        if (s.navigations.takeAborted()) await downloads.arrival(DOWNLOAD_GRACE_MS)
        const download = await downloaded(lastAction)
        if (download !== null) return download
        // The tree is read only when returned: `browse` shows the page text.
        const view = await observe(s, screenshots, { pageText: true, tree: action.returnAxtree })
        return output(view, {
          content: browseText({ url: view.url, error, pageText: view.text }),
          trigger: "browse",
          lastAction,
          error,
          returnAxtree: action.returnAxtree
        })
      })
    })

    const browseInteractive = Effect.fn("Browser.browseInteractive")(function*(action: BrowseInteractiveAction) {
      return yield* withSession(async (s, signal) => {
        let error = ""
        let bound: Array<BoundAction> = []
        try {
          bound = parseActions(action.browserActions).map(bindAction)
        } catch (cause) {
          error = errorText(cause)
        }
        const context: ActionContext = {
          tabs: tabsOf(s),
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
        const view = await observe(s, screenshots, { pageText: false, tree: true })
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
    })

    return { browse, browseInteractive } satisfies Browser
  })
