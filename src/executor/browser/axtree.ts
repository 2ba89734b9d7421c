/**
 * The accessibility tree the agent reads, with BrowserGym-style `bid`s: every
 * element of the page gets a stable id in the attribute `BID_ATTRIBUTE` (kept
 * across observations of the same document), Chromium's full AX tree is read
 * over CDP and each AX node is labelled with its element's bid, so `click("12")`
 * finds the element the agent saw as `[12]`.
 */
/// <reference lib="dom" />
import type { CDPSession, Page } from "playwright-core"
import { pythonRepr } from "../../quoting/pythonRepr.ts"

/** The attribute carrying an element's bid; actions find elements by it. */
export const BID_ATTRIBUTE = "data-sandbox-bid"

/** What the page says about one element (BrowserGym's `extra_element_properties`). */
export interface ElementProperties {
  /** 1 when the element has a rendered box and is not hidden, else 0. */
  readonly visibility: number
  /** `[x, y, width, height]` in CSS pixels, or null without a box. */
  readonly bbox: ReadonlyArray<number> | null
  readonly clickable: boolean
  readonly set_of_marks: boolean
}

export interface MarkedPage {
  readonly properties: Record<string, ElementProperties>
  /** The bid of the focused element. */
  readonly focusedBid: string
  /** The document's HTML when asked for ("" otherwise): read in the same round trip. */
  readonly html: string
}

/** Gives bids to elements that have none and reads their boxes (runs in the page). */
const markElements = ({ attribute, withHtml }: { attribute: string; withHtml: boolean }): MarkedPage => {
  const state = window as unknown as { __sandboxNextBid?: number }
  let next = state.__sandboxNextBid ?? 0
  const properties: Record<string, ElementProperties> = {}
  const clickableTags = new Set(["A", "BUTTON", "INPUT", "SELECT", "TEXTAREA", "SUMMARY", "OPTION", "LABEL"])
  const clickableRoles = new Set(["button", "link", "checkbox", "radio", "menuitem", "tab", "option", "switch"])
  const visit = (root: Document | ShadowRoot) => {
    for (const element of Array.from(root.querySelectorAll("*"))) {
      let bid = element.getAttribute(attribute)
      if (bid === null) {
        bid = String(next++)
        element.setAttribute(attribute, bid)
      }
      const rect = element.getBoundingClientRect()
      const style = getComputedStyle(element)
      const shown = rect.width > 0 && rect.height > 0 && style.visibility !== "hidden" && style.display !== "none"
      const clickable = clickableTags.has(element.tagName) ||
        clickableRoles.has(element.getAttribute("role") ?? "") ||
        (element as HTMLElement).onclick !== null ||
        style.cursor === "pointer"
      properties[bid] = {
        visibility: shown ? 1 : 0,
        bbox: shown ? [rect.x, rect.y, rect.width, rect.height] : null,
        clickable,
        set_of_marks: shown && clickable
      }
      if (element.shadowRoot !== null) visit(element.shadowRoot)
    }
  }
  visit(document)
  state.__sandboxNextBid = next
  return {
    properties,
    focusedBid: document.activeElement?.getAttribute(attribute) ?? "",
    html: withHtml ? document.documentElement.outerHTML : ""
  }
}

/** Marks the page's elements with bids; with `withHtml` also returns the page's HTML. */
export const markPage = (page: Page, withHtml: boolean): Promise<MarkedPage> =>
  page.evaluate(markElements, { attribute: BID_ATTRIBUTE, withHtml })

interface AXValue {
  readonly type: string
  readonly value?: unknown
}

/** A node of CDP's `Accessibility.getFullAXTree`. */
export interface AXNode {
  readonly nodeId: string
  readonly ignored: boolean
  readonly role?: AXValue
  readonly name?: AXValue
  readonly value?: AXValue
  readonly properties?: ReadonlyArray<{ readonly name: string; readonly value: AXValue }>
  readonly childIds?: ReadonlyArray<string>
  readonly parentId?: string
  readonly backendDOMNodeId?: number
}

interface DOMNode {
  readonly backendNodeId: number
  readonly attributes?: ReadonlyArray<string>
  readonly children?: ReadonlyArray<DOMNode>
  readonly shadowRoots?: ReadonlyArray<DOMNode>
  readonly contentDocument?: DOMNode
}

export interface AXSnapshot {
  readonly nodes: ReadonlyArray<AXNode>
  /** bid of each AX node that is an element. */
  readonly bids: ReadonlyMap<string, string>
  /** The DOM as `DOM.getDocument` reports it. */
  readonly dom: DOMNode
}

/** Reads the AX tree and the DOM, and labels AX nodes with their elements' bids. */
export const readAXTree = async (cdp: CDPSession): Promise<AXSnapshot> => {
  const [{ nodes }, { root }] = await Promise.all([
    cdp.send("Accessibility.getFullAXTree") as Promise<{ nodes: Array<AXNode> }>,
    cdp.send("DOM.getDocument", { depth: -1, pierce: true }) as Promise<{ root: DOMNode }>
  ])
  const bidOfBackendNode = new Map<number, string>()
  const walk = (node: DOMNode) => {
    const attributes = node.attributes ?? []
    for (let i = 0; i < attributes.length; i += 2) {
      if (attributes[i] === BID_ATTRIBUTE) bidOfBackendNode.set(node.backendNodeId, attributes[i + 1]!)
    }
    for (const child of [...(node.children ?? []), ...(node.shadowRoots ?? [])]) walk(child)
  }
  walk(root)
  const bids = new Map<string, string>()
  for (const node of nodes) {
    const bid = node.backendDOMNodeId === undefined ? undefined : bidOfBackendNode.get(node.backendDOMNodeId)
    if (bid !== undefined) bids.set(node.nodeId, bid)
  }
  return { nodes, bids, dom: root }
}

/** Roles that only wrap others: shown through their children. */
const TRANSPARENT_ROLES = new Set(["none", "generic", "LineBreak"])
/** Boolean properties shown by name when true. */
const FLAGS = new Set(["focused", "required", "disabled", "selected", "modal", "multiselectable"])
/** Properties shown as `name=value`. */
const VALUED = new Set(["checked", "pressed", "expanded", "url", "valuetext", "autocomplete"])

const propertyText = (node: AXNode, extra: ElementProperties | undefined): Array<string> => {
  const parts: Array<string> = []
  for (const { name, value } of node.properties ?? []) {
    const v = value.value
    if (FLAGS.has(name) && v === true) parts.push(name)
    else if (VALUED.has(name) && v !== undefined && v !== "false" && v !== false) {
      parts.push(`${name}=${typeof v === "string" ? pythonRepr(v) : String(v)}`)
    }
  }
  const value = node.value?.value
  if (typeof value === "string" && value !== "" && node.role?.value !== "StaticText") {
    parts.push(`value=${pythonRepr(value)}`)
  }
  if (extra?.clickable === true) parts.push("clickable")
  return parts
}

/**
 * The tree as indented text, one node a line: `[bid] role 'name', properties`.
 * Wrappers without a name and text repeating its parent's name are left out.
 */
export const axtreeText = (snapshot: AXSnapshot, properties: Readonly<Record<string, ElementProperties>>): string => {
  const byId = new Map(snapshot.nodes.map((node) => [node.nodeId, node]))
  const lines: Array<string> = []
  const visit = (node: AXNode, depth: number, parentName: string) => {
    const role = String(node.role?.value ?? "")
    const name = String(node.name?.value ?? "").trim()
    const hidden = node.ignored || (TRANSPARENT_ROLES.has(role) && name === "") || role === "InlineTextBox" ||
      (role === "StaticText" && (name === "" || parentName.includes(name)))
    const childDepth = hidden ? depth : depth + 1
    if (!hidden) {
      const bid = snapshot.bids.get(node.nodeId)
      const extra = bid === undefined ? undefined : properties[bid]
      const head = `${"\t".repeat(depth)}${bid === undefined ? "" : `[${bid}] `}${role} ${pythonRepr(name)}`
      lines.push([head, ...propertyText(node, extra)].join(", "))
    }
    for (const id of node.childIds ?? []) {
      const child = byId.get(id)
      if (child !== undefined) visit(child, childDepth, hidden ? parentName : name)
    }
  }
  const root = snapshot.nodes.find((node) => node.parentId === undefined) ?? snapshot.nodes[0]
  if (root !== undefined) visit(root, 0, "")
  return lines.join("\n")
}
