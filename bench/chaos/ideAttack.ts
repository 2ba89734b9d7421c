/**
 * One browser, two sandboxes' IDEs: what a page that sandbox A serves from its own IDE's origin can
 * do to sandbox B's IDE, in a real headless Chromium (the user's browser: A's IDE, then B's, were
 * opened in it, so it holds B's token cookie). A's page tries to register a service worker over its whole
 * origin from a script under a sub-path (it needs `Service-Worker-Allowed`, which must be stripped),
 * to reach B's IDE by fetch (with credentials, CORS and no-CORS), by WebSocket and in an iframe,
 * and sends the browser to a server on other ports of 127.0.0.1 (an agent's app port) under
 * every name it knows, which must never get B's token. B's IDE records what reaches it past its
 * gates: nothing of A's may.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { chromium } from "playwright-core"
import { findChromium } from "../../src/executor/browser/chromium.ts"
import { isSharedLoopbackHost } from "../../src/server/vscode/ideOrigin.ts"

/**
 * code-server's stand-in: answers its health check on the socket it is given; serves an attack page
 * and a service worker script under `static/` that claims the whole origin (as code-server's own
 * does); records every other request and upgrade (to `$IDE_LOG`, default /tmp/ide.log).
 */
export const RECORDING_IDE = "const fs = require('fs'); const a = process.argv; " +
  "const file = process.env.IDE_LOG || '/tmp/ide.log'; " +
  "const log = (kind, q) => fs.appendFileSync(file, JSON.stringify({ kind, path: q.url, headers: q.headers }) + '\\n'); " +
  "const s = require('http').createServer((q, r) => { " +
  "if (q.url.endsWith('/attack.html')) return r.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>a</title>'); " +
  "if (q.url.endsWith('/static/sw.js')) return r.writeHead(200, { 'content-type': 'text/javascript', 'service-worker-allowed': '/' }).end('self.onfetch = () => {}'); " +
  "if (q.url !== '/healthz') log('http', q); r.end('ide') }); " +
  "s.on('upgrade', (q, c) => { log('upgrade', q); c.end('HTTP/1.1 101 Switching Protocols\\r\\nConnection: Upgrade\\r\\nUpgrade: websocket\\r\\n\\r\\n') }); " +
  "s.listen(a[a.indexOf('--socket') + 1])"

/** What the attack achieved. */
export interface AttackOutcome {
  /** B's IDE answered its own URL in this browser (1): the control, else the rest proves nothing. */
  readonly victimOpened: number
  /** A's worker registered over A's whole origin from `/static/sw.js` (1: `Service-Worker-Allowed` passed). */
  readonly wideWorker: number
  /** A's page opened a WebSocket to B's IDE, or read B's IDE in an iframe. */
  readonly opened: number
  /** Visits of the app server, and those that carried B's token. */
  readonly appVisits: number
  readonly victimTokenAtApp: number
}

/** A server on 127.0.0.1 recording the `Cookie` headers it gets. */
const appServer = () =>
  new Promise<{ readonly port: number; readonly cookies: Array<string>; readonly close: () => void }>((resolve) => {
    const cookies: Array<string> = []
    const server = createServer((request, response) => {
      cookies.push(request.headers.cookie ?? "")
      response.end("app")
    }).listen(
      0,
      "127.0.0.1",
      () => resolve({ port: (server.address() as AddressInfo).port, cookies, close: () => server.close() })
    )
  })

/** Run in A's page: the attacks on `victim` (B's IDE origin), each path carrying `marker`. */
const attack = async ({ marker, victim }: { readonly victim: string; readonly marker: string }) => {
  // Relative: under the IDE's path prefix too, where an IDE is served below a shared origin.
  const wideWorker = await navigator.serviceWorker.register("static/sw.js", { scope: "/" }).then(() => 1, () => 0)
  for (const mode of ["no-cors", "cors"] as const) {
    await fetch(`${victim}/${marker}-fetch-${mode}`, { mode, credentials: "include" }).catch(() => undefined)
  }
  const socket = await new Promise<number>((resolve) => {
    const ws = new WebSocket(`${victim.replace(/^http/, "ws")}/${marker}-ws`)
    ws.addEventListener("open", () => {
      ws.close()
      resolve(1)
    })
    ws.addEventListener("error", () => resolve(0))
  })
  const frame = document.createElement("iframe")
  frame.src = `${victim}/${marker}-frame`
  document.body.append(frame)
  await Promise.race([
    new Promise((resolve) => frame.addEventListener("load", resolve)),
    new Promise((resolve) => setTimeout(resolve, 10_000))
  ])
  const read = (() => {
    try {
      return frame.contentDocument?.body.innerText === undefined ? 0 : 1
    } catch {
      return 0
    }
  })()
  return { wideWorker, opened: socket + read }
}

/**
 * Open A's IDE (`attackerUrl`, with its token) then B's (`victimUrl`) in one Chromium, and attack
 * B from a page of A's IDE origin; `token`: B's, looked for at the app server. B's IDE's records are the caller's
 * to read (every attack path carries `marker`).
 */
export const browserAttack = async (input: {
  readonly victimUrl: string
  readonly attackerUrl: string
  readonly token: string
  readonly marker: string
}): Promise<AttackOutcome> => {
  const app = await appServer()
  const browser = await chromium.launch({ executablePath: findChromium()!, args: ["--no-sandbox"] })
  try {
    const page = await browser.newPage()
    // The user opened A's IDE, then B's, and works in B: B's cookie is the last one set.
    await page.goto(input.attackerUrl)
    const attacker = new URL(page.url())
    const attackPage = new URL("attack.html", attacker).href
    const opened = await page.goto(input.victimUrl)
    const victim = new URL(page.url()).origin
    // Where B's IDE lives on its host: a cookie's Path is no boundary for a server on another port.
    const victimPath = new URL(page.url()).pathname
    // Opened, on a host of its own (the runtime API's entry and a shared loopback host send it there).
    const victimOpened = opened?.status() === 200 && !isSharedLoopbackHost(new URL(victim).hostname) ? 1 : 0
    await page.goto(attackPage)
    const outcome = await page.evaluate(attack, { victim, marker: input.marker })
    // A's page sends the browser to the app's port under every name it can form: B's host is not one.
    for (const host of ["127.0.0.1", "localhost", attacker.hostname]) {
      for (const path of new Set(["/", victimPath])) await page.goto(`http://${host}:${app.port}${path}`)
    }
    return {
      victimOpened,
      ...outcome,
      appVisits: app.cookies.length,
      victimTokenAtApp: app.cookies.filter((cookie) => cookie.includes(input.token)).length
    }
  } finally {
    await browser.close()
    app.close()
  }
}
