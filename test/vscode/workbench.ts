/**
 * What every runtime's VS Code test checks of `info.urls.vscode` (OpenHands' `vscode_url`): the URL's
 * shape, that the IDE refuses whoever lacks the connection token, and that a real Chromium opening
 * it gets a workbench that lists the workspace and shows a file. Each runtime puts `WORKBENCH_FILE`
 * in its workspace first (a host directory, or `copyTo`), then calls `expectWorkbench`.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { createHash, X509Certificate } from "node:crypto"
import { mkdirSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { chromium, type Locator, type Page } from "playwright-core"
import { findChromium } from "../../src/executor/browser/chromium.ts"
import { ideHostLabel, tokenCookieName } from "../../src/server/vscode/ideOrigin.ts"
import { ideRequest } from "./ideHttp.ts"

/** The file the workbench must show, and its text. */
export const WORKBENCH_FILE = "hello_from_the_sandbox.py"
export const WORKBENCH_TEXT = "print('the workbench opened me')\n"

const OUTPUT = join(import.meta.dirname, "..", "..", ".tmp", "test-output")

/** The status the IDE's token gate answers `?tkn=<token>` at `base` with (302: accepted, sets its cookie; 403: refused). */
export const tokenGate = (base: string, token: string) =>
  Effect.promise(async () => (await ideRequest(`${base}/?${new URLSearchParams({ tkn: token })}`)).status)

/**
 * `page.goto(url)`, again when Chromium abandons it with `ERR_NETWORK_CHANGED`: Chromium drops
 * its connections, loopback ones included, whenever an interface of the host comes or goes, and
 * the Docker sandboxes of the files beside this one add and remove bridges and veths all the time
 * (Modal's stand-in, once in CI). Any other failure is the test's.
 */
const gotoThroughNetworkChanges = async (page: Page, url: string) => {
  for (let attempt = 1;; attempt++) {
    try {
      // Two minutes, as the waits after it: the workbench's first load on a CI machine running the
      // parallel group beside it has taken past Playwright's 30 s default (E2B's stand-in, once).
      return await page.goto(url, { timeout: 120_000 })
    } catch (error) {
      if (attempt === 5 || !String(error).includes("net::ERR_NETWORK_CHANGED")) throw error
    }
  }
}

/**
 * Click `entry` until `shown` is visible, within two minutes. On a loaded CI machine (E2B's
 * stand-in, once) the file had not opened a minute after its one click: a click that lands while
 * the workbench is still settling (the explorer re-rendering under it) opens nothing. Clicking
 * again is what a user would do, and clicking a file already opening or open changes nothing.
 */
const openFromExplorer = async (entry: Locator, shown: Locator) => {
  const deadline = Date.now() + 120_000
  for (;;) {
    await entry.click()
    try {
      return await shown.waitFor({ timeout: Math.max(1, Math.min(20_000, deadline - Date.now())) })
    } catch (error) {
      if (Date.now() >= deadline) throw error
    }
  }
}

/** `url` without its connection token. */
const withoutToken = (url: URL): string => {
  const bare = new URL(url)
  bare.searchParams.delete("tkn")
  return bare.href
}

/**
 * Chromium's flag trusting `certificate` (PEM) alone, by its public key's hash: a stand-in's
 * self-signed tunnel certificate, which the test process trusts but Chromium does not.
 */
const trusting = (certificate: string | undefined): Array<string> => {
  if (certificate === undefined) return []
  const spki = new X509Certificate(certificate).publicKey.export({ type: "spki", format: "der" })
  return [`--ignore-certificate-errors-spki-list=${createHash("sha256").update(spki).digest("base64")}`]
}

/** A server on 127.0.0.1 (an agent's app port, any local user's server) recording what it gets. */
const cookieRecorder = () =>
  new Promise<
    {
      readonly port: number
      readonly cookies: Array<string>
      readonly paths: Array<string>
      readonly close: () => void
    }
  >((resolve) => {
    const cookies: Array<string> = []
    const paths: Array<string> = []
    const server = createServer((request, response) => {
      cookies.push(request.headers.cookie ?? "")
      paths.push(request.url ?? "")
      response.end("app")
    }).listen(
      0,
      "127.0.0.1",
      () => resolve({ port: (server.address() as AddressInfo).port, cookies, paths, close: () => server.close() })
    )
  })

/**
 * The workbench's origin keeps its own: its token cookie is host-only on the IDE's own host and
 * named for the token, a server on another port of 127.0.0.1 (`localhost` too) that the browser
 * visits gets no token, code-server's port proxy is off (403), and code-server's own service
 * worker script comes without `Service-Worker-Allowed`.
 */
const expectIsolated = (workbench: Page, token: string, sharedHost: boolean) =>
  Effect.acquireUseRelease(
    Effect.promise(cookieRecorder),
    (app) =>
      Effect.promise(async () => {
        const context = workbench.context()
        const cookies = await context.cookies()
        assert.deepStrictEqual(
          cookies.map((c) => [c.name, c.domain, c.sameSite, c.httpOnly]),
          [[tokenCookieName(token), new URL(workbench.url()).hostname, "Lax", true]]
        )
        const page = await context.newPage()
        for (const host of ["127.0.0.1", "localhost"]) await page.goto(`http://${host}:${app.port}/`)
        if (!sharedHost) {
          assert.deepStrictEqual(app.cookies.filter((c) => c.includes(token)), [], "the token on another port")
        }
        await page.close()
        // Asked from the workbench's own page (its cookie, its origin).
        const answers = await workbench.evaluate((paths) =>
          Promise.all(paths.map(async (path) => {
            const answer = await fetch(path)
            return [path, answer.status, answer.headers.get("service-worker-allowed")]
          })), [`proxy/${app.port}/`, `absproxy/${app.port}/`, "_static/out/browser/serviceWorker.js"])
        // Relative to the workbench (a front end may serve it under a path). code-server refuses its
        // proxy routes when they are off (403); on, they would reach the app (or 502).
        assert.deepStrictEqual(answers, [
          [`proxy/${app.port}/`, 403, null],
          [`absproxy/${app.port}/`, 403, null],
          ["_static/out/browser/serviceWorker.js", 200, null]
        ])
        // Chromium asks for `/favicon.ico` on its own time, so it may come after the checks or
        // never: the app must have had both visits, and nothing but them and their icons.
        assert.deepStrictEqual(
          [
            app.paths.filter((path) => path === "/").length,
            app.paths.filter((path) => path !== "/favicon.ico" && path !== "/")
          ],
          [2, []],
          "the app was reached by the two visits only"
        )
      }),
    (app) => Effect.sync(app.close)
  )

/**
 * `url` names the workspace folder and carries a token; without the token it is refused (403);
 * with it, Chromium's workbench lists the workspace and opens `WORKBENCH_FILE`, whose text shows
 * in an editor, on an origin that keeps to itself (`expectIsolated`). A screenshot goes to
 * `.tmp/test-output/<screenshot>.png`.
 */
export const expectWorkbench = (
  url: string | undefined,
  options: {
    readonly screenshot: string
    readonly workspace?: string
    readonly certificate?: string
    /**
     * A provider's stand-in, which serves what is a host per sandbox at the provider on 127.0.0.1
     * (under a path, or https): a cookie there is every local port's, so that check is left out.
     */
    readonly sharedHost?: boolean
  }
) =>
  Effect.gen(function*() {
    assert.isString(url, "info.urls.vscode")
    const parsed = new URL(url!)
    assert.strictEqual(parsed.searchParams.get("folder"), options.workspace ?? "/workspace")
    assert.match(parsed.searchParams.get("tkn") ?? "", /^[0-9a-f-]{36}$/)
    const refused = yield* Effect.promise(() => ideRequest(withoutToken(parsed)))
    assert.strictEqual(refused.status, 403, "without the token")

    const shown = yield* Effect.acquireUseRelease(
      Effect.promise(() =>
        chromium.launch({ executablePath: findChromium()!, args: ["--no-sandbox", ...trusting(options.certificate)] })
      ),
      (browser) =>
        Effect.promise(async () => {
          const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
          const page = await context.newPage()
          await gotoThroughNetworkChanges(page, url!)
          // The explorer lists the workspace; opening the file shows its text in an editor.
          const entry = page.locator(".explorer-folders-view").getByText(WORKBENCH_FILE)
          await entry.waitFor({ timeout: 120_000 })
          await openFromExplorer(entry, page.locator(".monaco-editor .view-lines").getByText("the workbench opened me"))
          mkdirSync(OUTPUT, { recursive: true })
          await page.screenshot({ path: join(OUTPUT, `${options.screenshot}.png`) })
          return { page, text: await page.locator("body").innerText(), title: await page.title() }
        }).pipe(
          Effect.tap(({ page }) => expectIsolated(page, parsed.searchParams.get("tkn")!, options.sharedHost === true))
        ),
      (browser) => Effect.promise(() => browser.close())
    )
    assert.include(shown.text, WORKBENCH_FILE)
    assert.include(shown.title, WORKBENCH_FILE)
  })

/** `url` (a runtime's `info.urls.vscode`) names its IDE on the token's own `ide-<h>.localhost` host. */
export const expectOwnIdeHost = (url: string | undefined) => {
  const parsed = new URL(url ?? "http://missing")
  assert.strictEqual(parsed.hostname, `${ideHostLabel(parsed.searchParams.get("tkn") ?? "")}.localhost`)
  return parsed
}
