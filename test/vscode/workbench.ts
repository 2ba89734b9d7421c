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
import { join } from "node:path"
import { chromium } from "playwright-core"
import { findChromium } from "../../src/executor/browser/chromium.ts"

/** The file the workbench must show, and its text. */
export const WORKBENCH_FILE = "hello_from_the_sandbox.py"
export const WORKBENCH_TEXT = "print('the workbench opened me')\n"

const OUTPUT = join(import.meta.dirname, "..", "..", ".tmp", "test-output")

/** The status the IDE's token gate answers `?tkn=<token>` at `base` with (302: accepted, sets its cookie; 403: refused). */
export const tokenGate = (base: string, token: string) =>
  Effect.promise(async () =>
    (await fetch(`${base}/?${new URLSearchParams({ tkn: token })}`, { redirect: "manual" })).status
  )

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

/**
 * `url` names the workspace folder and carries a token; without the token it is refused (403);
 * with it, Chromium's workbench lists the workspace and opens `WORKBENCH_FILE`, whose text shows
 * in an editor. A screenshot goes to `.tmp/test-output/<screenshot>.png`.
 */
export const expectWorkbench = (
  url: string | undefined,
  options: { readonly screenshot: string; readonly workspace?: string; readonly certificate?: string }
) =>
  Effect.gen(function*() {
    assert.isString(url, "info.urls.vscode")
    const parsed = new URL(url!)
    assert.strictEqual(parsed.searchParams.get("folder"), options.workspace ?? "/workspace")
    assert.match(parsed.searchParams.get("tkn") ?? "", /^[0-9a-f-]{36}$/)
    const refused = yield* Effect.promise(() => fetch(withoutToken(parsed)))
    assert.strictEqual(refused.status, 403, "without the token")

    const shown = yield* Effect.acquireUseRelease(
      Effect.promise(() =>
        chromium.launch({ executablePath: findChromium()!, args: ["--no-sandbox", ...trusting(options.certificate)] })
      ),
      (browser) =>
        Effect.promise(async () => {
          const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
          await page.goto(url!)
          // The explorer lists the workspace; opening the file shows its text in an editor.
          const entry = page.locator(".explorer-folders-view").getByText(WORKBENCH_FILE)
          await entry.waitFor({ timeout: 120_000 })
          await entry.click()
          await page.locator(".monaco-editor .view-lines").getByText("the workbench opened me").waitFor({
            timeout: 60_000
          })
          mkdirSync(OUTPUT, { recursive: true })
          await page.screenshot({ path: join(OUTPUT, `${options.screenshot}.png`) })
          return { text: await page.locator("body").innerText(), title: await page.title() }
        }),
      (browser) => Effect.promise(() => browser.close())
    )
    assert.include(shown.text, WORKBENCH_FILE)
    assert.include(shown.title, WORKBENCH_FILE)
  })
