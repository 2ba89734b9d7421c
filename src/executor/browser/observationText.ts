/**
 * The text an agent reads from a browser observation (spec §2.8), as OpenHands
 * builds it: the URL, then for `browse_interactive` the focused bid, the
 * screenshot path and the accessibility tree, for `browse` the page as text;
 * an action's error sits in its own block before them.
 */

const AXTREE_BEGIN = "============== BEGIN accessibility tree =============="
const AXTREE_END = "============== END accessibility tree =============="
const PAGE_BEGIN = "============== BEGIN webpage content =============="
const PAGE_END = "============== END webpage content =============="
const ACTION_OK = "[Action executed successfully.]"

const errorBlock = (error: string): string =>
  "================ BEGIN error message ===============\n" +
  "The following error occurred when executing the last action:\n" +
  `${error}\n` +
  "================ END error message ===============\n"

export interface InteractiveText {
  readonly url: string
  readonly focusedBid: string
  readonly screenshotPath: string | null
  /** The action's error, "" when it succeeded. */
  readonly error: string
  readonly axtree: string
}

/** `browse_interactive`: URL, focus, screenshot, outcome and the accessibility tree. */
export const interactiveText = (obs: InteractiveText): string =>
  `[Current URL: ${obs.url}]\n` +
  `[Focused element bid: ${obs.focusedBid}]\n` +
  (obs.screenshotPath === null ? "" : `[Screenshot saved to: ${obs.screenshotPath}]\n`) +
  "\n" +
  (obs.error === "" ? `${ACTION_OK}\n` : errorBlock(obs.error)) +
  `${AXTREE_BEGIN}\n${obs.axtree}\n${AXTREE_END}\n`

export interface PageTextObservation {
  readonly url: string
  readonly error: string
  readonly pageText: string
}

/** `browse`: URL, the error if any, and the page as text. */
export const browseText = (obs: PageTextObservation): string =>
  `[Current URL: ${obs.url}]\n` +
  (obs.error === "" ? "" : errorBlock(obs.error)) +
  `${PAGE_BEGIN}\n${obs.pageText}\n${PAGE_END}\n`
