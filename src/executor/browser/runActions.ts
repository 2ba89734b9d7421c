/**
 * Carrying out BrowserGym actions with Playwright, in order; the first that
 * fails stops the rest and its error is what the agent reads. Elements are
 * found by their bid; a missing bid fails at once rather than after a timeout.
 */
import { setTimeout as sleep } from "node:timers/promises"
import type { Locator, Page } from "playwright-core"
import type { BoundAction } from "./actionSet.ts"
import { BID_ATTRIBUTE } from "./axtree.ts"

/** How long an element action waits for its element to become actionable. */
const ELEMENT_TIMEOUT_MS = 3_000

/** The session's tabs: the active one and the operations on them. */
export interface Tabs {
  readonly active: () => Page
  readonly open: () => Promise<void>
  readonly closeActive: () => Promise<void>
  readonly focus: (index: number) => Promise<void>
}

export interface ActionContext {
  readonly tabs: Tabs
  /** Navigation timeout for `goto`, `go_back` and `go_forward`. */
  readonly navigationTimeoutMs: number
  /** Resolves an agent's file path for `upload_file` (mount path, cwd, workspace rules). */
  readonly resolveFile: (path: string) => Promise<string>
  /** Aborted when the action is interrupted: no further action runs. */
  readonly signal: AbortSignal
}

const element = async (page: Page, bid: string): Promise<Locator> => {
  const locator = page.locator(`[${BID_ATTRIBUTE}="${bid.replaceAll("\\", "\\\\").replaceAll("\"", "\\\"")}"]`)
  if (await locator.count() === 0) throw new Error(`Could not find element with bid "${bid}"`)
  return locator.first()
}

type Modifier = "Alt" | "Control" | "ControlOrMeta" | "Meta" | "Shift"
type Button = "left" | "right" | "middle"

const button = (value: unknown): Button => {
  if (value === "left" || value === "right" || value === "middle") return value
  throw new Error(`button must be 'left', 'middle' or 'right', not '${String(value)}'`)
}

const modifiers = (value: unknown): Array<Modifier> => {
  const names = value as ReadonlyArray<string>
  for (const name of names) {
    if (!["Alt", "Control", "ControlOrMeta", "Meta", "Shift"].includes(name)) {
      throw new Error(`unknown modifier '${name}'`)
    }
  }
  return names as Array<Modifier>
}

/** Runs one action. */
const runOne = async (action: BoundAction, context: ActionContext): Promise<void> => {
  const page = context.tabs.active()
  const p = action.params
  const timeout = ELEMENT_TIMEOUT_MS
  const bidTarget = () => element(page, String(p["bid"]))
  switch (action.name) {
    case "goto":
      await page.goto(String(p["url"]), { timeout: context.navigationTimeoutMs })
      return
    case "go_back":
      await page.goBack({ timeout: context.navigationTimeoutMs })
      return
    case "go_forward":
      await page.goForward({ timeout: context.navigationTimeoutMs })
      return
    case "noop":
      // Cut short by an interruption (the action's signal), unlike Playwright's waitForTimeout.
      await sleep(Number(p["wait_ms"]), undefined, { signal: context.signal })
      return
    case "click":
    case "dblclick": {
      const options = { button: button(p["button"]), modifiers: modifiers(p["modifiers"]) }
      const target = await bidTarget()
      // The element has the element timeout to become clickable (a trial click only checks); the
      // navigation the click starts, which Playwright's click waits for, has the action's (as
      // `goto`). Under the one 3 s timeout, a form slow to answer failed a click that had happened
      // (CI, the real cluster's pod, under load).
      await target.click({ ...options, trial: true, timeout })
      const act = { ...options, timeout: context.navigationTimeoutMs }
      await (action.name === "click" ? target.click(act) : target.dblclick(act))
      return
    }
    case "hover":
      await (await bidTarget()).hover({ timeout })
      return
    case "fill":
      await (await bidTarget()).fill(String(p["value"]), { timeout })
      return
    case "select_option":
      await (await bidTarget()).selectOption(p["options"] as Array<string>, { timeout })
      return
    case "press":
      await (await bidTarget()).press(String(p["key_comb"]), { timeout })
      return
    case "focus":
      await (await bidTarget()).focus({ timeout })
      return
    case "clear":
      await (await bidTarget()).clear({ timeout })
      return
    case "drag_and_drop":
      await (await element(page, String(p["from_bid"]))).dragTo(await element(page, String(p["to_bid"])), { timeout })
      return
    case "scroll":
      await page.mouse.wheel(Number(p["delta_x"]), Number(p["delta_y"]))
      return
    case "upload_file": {
      const files = await Promise.all((p["file"] as Array<string>).map(context.resolveFile))
      const target = await bidTarget()
      const [chooser] = await Promise.all([page.waitForEvent("filechooser", { timeout }), target.click({ timeout })])
      await chooser.setFiles(files)
      return
    }
    case "new_tab":
      await context.tabs.open()
      return
    case "tab_close":
      await context.tabs.closeActive()
      return
    case "tab_focus":
      await context.tabs.focus(Number(p["index"]))
      return
    case "send_msg_to_user":
    case "report_infeasible":
      // Messages for the user: the agent's own text, with nothing to do in the page.
      return
  }
}

/** The first line of an error (Playwright appends a call log after it). */
export const errorText = (error: unknown): string => {
  const message = error instanceof Error ? error.message : String(error)
  return message.split("\n")[0]!.trim()
}

/** Runs the actions in order; returns the error text of the first that fails, or "". */
export const runActions = async (actions: ReadonlyArray<BoundAction>, context: ActionContext): Promise<string> => {
  for (const action of actions) {
    context.signal.throwIfAborted()
    try {
      await runOne(action, context)
    } catch (error) {
      return `${action.source}: ${errorText(error)}`
    }
  }
  // Let a navigation an action started finish loading before the page is observed.
  await context.tabs.active().waitForLoadState("load", { timeout: context.navigationTimeoutMs }).catch(() => undefined)
  return ""
}
