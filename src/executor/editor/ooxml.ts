/**
 * The text of Office Open XML packages (.pptx, .xlsx; and the expansion check for .docx),
 * read straight from their zip with yauzl: these formats keep their text in a few
 * well-known XML parts, so no office library is needed. Reading is bounded: a
 * package whose parts expand past `MAX_EXPANDED_BYTES` is refused (yauzl checks
 * while inflating that no entry exceeds the size it declares).
 */
import type { ZipFile } from "yauzl"

/** Most bytes a document's parts may expand to (a 10 MB document is rarely over a few times that). */
export const MAX_EXPANDED_BYTES = 64 * 1024 * 1024

/** yauzl is loaded on the first document read, not at every server's boot. */
const openZip = async (bytes: Buffer) => {
  const { fromBuffer } = await import("yauzl")
  return new Promise<ZipFile>((resolve, reject) =>
    fromBuffer(bytes, { lazyEntries: true }, (error, zip) => (error ? reject(error) : resolve(zip)))
  )
}

/**
 * The parts whose names `wanted` accepts, as text; every entry's declared size counts
 * toward the bound, so a package that would expand too far is refused before inflating.
 */
export const readParts = async (bytes: Buffer, wanted: (name: string) => boolean): Promise<Map<string, string>> => {
  const zip = await openZip(bytes)
  const parts = new Map<string, string>()
  let expanded = 0
  return new Promise((resolve, reject) => {
    const fail = (error: Error) => {
      zip.close()
      reject(error)
    }
    zip.on("error", fail)
    zip.on("end", () => resolve(parts))
    zip.on("entry", (entry) => {
      expanded += entry.uncompressedSize
      if (expanded > MAX_EXPANDED_BYTES) {
        return fail(new Error(`the document expands to more than ${MAX_EXPANDED_BYTES / 1024 / 1024} MiB`))
      }
      if (!wanted(entry.fileName)) return zip.readEntry()
      zip.openReadStream(entry, (error, stream) => {
        if (error) return fail(error)
        const chunks: Array<Buffer> = []
        stream.on("data", (chunk: Buffer) => chunks.push(chunk))
        stream.on("error", fail)
        stream.on("end", () => {
          parts.set(entry.fileName, Buffer.concat(chunks).toString("utf8"))
          zip.readEntry()
        })
      })
    })
    zip.readEntry()
  })
}

const ENTITIES: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'" }

/** XML character data as text: entities and character references decoded. */
export const xmlText = (text: string): string =>
  text.replace(/&(?:#x([0-9a-fA-F]+)|#(\d+)|(\w+));/g, (whole, hex, dec, name) =>
    hex !== undefined
      ? String.fromCodePoint(parseInt(hex, 16))
      : dec !== undefined
      ? String.fromCodePoint(Number(dec))
      : ENTITIES[name] ?? whole)

/** Elements named `tag` (with a namespace prefix such as `a:p`), each with its inner XML. */
const elements = (xml: string, tag: string): Array<string> =>
  [...xml.matchAll(new RegExp(`<${tag}(?:\\s[^>]*)?(?:/>|>([\\s\\S]*?)</${tag}>)`, "g"))].map((m) => m[1] ?? "")

/** The text of each DrawingML paragraph (`a:p`) in `xml`: its runs' text, line breaks as `\n`. */
const paragraphs = (xml: string): Array<string> =>
  elements(xml, "a:p").map((p) =>
    [...p.matchAll(/<a:t(?:\s[^>]*)?>([^<]*)<\/a:t>|<a:br\s*\/>/g)]
      .map((m) => (m[1] === undefined ? "\n" : xmlText(m[1])))
      .join("")
  )

/** Numeric order of `ppt/slides/slide<N>.xml` and `xl/worksheets/sheet<N>.xml` names. */
const byNumber = (a: string, b: string) => Number(/(\d+)\.xml$/.exec(a)?.[1]) - Number(/(\d+)\.xml$/.exec(b)?.[1])

export interface SlideShape {
  /** Its paragraphs joined by `\n`. */
  readonly text: string
  /** The slide's title placeholder. */
  readonly isTitle: boolean
}

/** The slides of a .pptx, in slide-file order: the text shapes of each, in document order. */
export const pptxSlides = async (bytes: Buffer): Promise<Array<Array<SlideShape>>> => {
  const parts = await readParts(bytes, (name) => /^ppt\/slides\/slide\d+\.xml$/.test(name))
  return [...parts.keys()].sort(byNumber).map((name) =>
    elements(parts.get(name)!, "p:sp").flatMap((shape) => {
      const body = elements(shape, "p:txBody")[0]
      if (body === undefined) return []
      return [{
        text: paragraphs(body).join("\n"),
        isTitle: /<p:ph\s[^>]*type="(?:title|ctrTitle)"/.test(shape)
      }]
    })
  )
}

export interface Sheet {
  readonly name: string
  /** Rows as cells' shown text, padded to the widest row. */
  readonly rows: ReadonlyArray<ReadonlyArray<string>>
}

/** Column index of a cell reference (`C7` → 2). */
const column = (ref: string): number => {
  let n = 0
  for (const c of /^[A-Z]+/.exec(ref)?.[0] ?? "") n = n * 26 + c.charCodeAt(0) - 64
  return n - 1
}

/** The sheets of a .xlsx with their cell values (shared and inline strings, numbers, booleans as stored). */
export const xlsxSheets = async (bytes: Buffer): Promise<Array<Sheet>> => {
  const parts = await readParts(
    bytes,
    (name) =>
      name === "xl/workbook.xml" || name === "xl/_rels/workbook.xml.rels" || name === "xl/sharedStrings.xml"
      || /^xl\/worksheets\/sheet\d+\.xml$/.test(name)
  )
  const shared = elements(parts.get("xl/sharedStrings.xml") ?? "", "si").map((si) =>
    [...si.matchAll(/<t(?:\s[^>]*)?>([^<]*)<\/t>/g)].map((m) => xmlText(m[1]!)).join("")
  )
  const targets = new Map(
    [...(parts.get("xl/_rels/workbook.xml.rels") ?? "").matchAll(/<Relationship\s[^>]*>/g)].map((m) => [
      /\sId="([^"]*)"/.exec(m[0])?.[1],
      `xl/${/\sTarget="([^"]*)"/.exec(m[0])?.[1]?.replace(/^\/?(?:xl\/)?/, "")}`
    ])
  )
  const sheets = [...(parts.get("xl/workbook.xml") ?? "").matchAll(/<sheet\s[^>]*>/g)].map((m) => ({
    name: xmlText(/\sname="([^"]*)"/.exec(m[0])?.[1] ?? ""),
    part: targets.get(/\sr:id="([^"]*)"/.exec(m[0])?.[1])
  }))
  return sheets.map(({ name, part }) => {
    const rows = elements(part === undefined ? "" : parts.get(part) ?? "", "row").map((row) => {
      const cells: Array<string> = []
      for (const m of row.matchAll(/<c(\s[^>]*)?(?:\/>|>([\s\S]*?)<\/c>)/g)) {
        const attributes = m[1] ?? ""
        const inner = m[2] ?? ""
        const ref = /\sr="([A-Z]+\d+)"/.exec(attributes)?.[1]
        const type = /\st="(\w+)"/.exec(attributes)?.[1]
        const value = xmlText(/<v>([^<]*)<\/v>/.exec(inner)?.[1] ?? "")
        const text = type === "s"
          ? shared[Number(value)] ?? ""
          : type === "inlineStr"
          ? [...inner.matchAll(/<t(?:\s[^>]*)?>([^<]*)<\/t>/g)].map((t) => xmlText(t[1]!)).join("")
          : type === "b"
          ? (value === "1" ? "TRUE" : "FALSE")
          : value
        cells[ref === undefined ? cells.length : column(ref)] = text
      }
      return Array.from(cells, (cell) => cell ?? "")
    })
    const width = Math.max(0, ...rows.map((r) => r.length))
    return { name, rows: rows.map((r) => [...r, ...Array<string>(width - r.length).fill("")]) }
  })
}
