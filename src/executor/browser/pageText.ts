/**
 * A page as readable text for the agent (spec §2.8: html2text with links kept,
 * images as their alt text, no line wrapping), made with turndown. Links are
 * made absolute against the page's URL so the agent can `goto` them as written.
 */
import type TurndownService from "turndown"

const converter = async (pageUrl: string): Promise<TurndownService> => {
  // Loaded on first use: turndown's DOM (domino) is most of its weight, and few sessions browse.
  const { default: Turndown } = await import("turndown")
  const service = new Turndown({
    headingStyle: "atx",
    codeBlockStyle: "fenced",
    bulletListMarker: "*",
    emDelimiter: "_"
  })
  service.remove(["script", "style", "noscript", "template", "head", "title"])
  service.addRule("imageAsAlt", {
    filter: "img",
    replacement: (_content, node) => (node as HTMLElement).getAttribute("alt") ?? ""
  })
  service.addRule("absoluteLink", {
    filter: (node) => node.nodeName === "A" && node.getAttribute("href") !== null,
    replacement: (content, node) => {
      const href = (node as HTMLElement).getAttribute("href")!
      const text = content.trim()
      if (text === "" || href.startsWith("javascript:")) return content
      return `[${text}](${absolute(href, pageUrl)})`
    }
  })
  return service
}

const absolute = (href: string, base: string): string => {
  try {
    return new URL(href, base).href
  } catch {
    return href
  }
}

/** The HTML of a page at `pageUrl` as Markdown. */
export const pageText = async (html: string, pageUrl: string): Promise<string> =>
  (await converter(pageUrl)).turndown(html)
