/**
 * Documents as text, for OHEditor's `view` of .pdf, .docx, .pptx and .xlsx (OpenHands
 * converts them with markitdown) and for agent_skills' `parse_*` helpers. PDF text
 * comes from pdf.js (through `unpdf`, whose build needs no worker file, so it bundles);
 * DOCX from mammoth's HTML turned into Markdown by turndown, which is what markitdown
 * does with mammoth and markdownify; PPTX and XLSX from their XML (ooxml.ts). The
 * libraries load on first use: most sessions never view a document.
 */
import { pptxSlides, readParts, xlsxSheets } from "./ooxml.ts"

/** The text of each page of a PDF. */
export const pdfPages = async (bytes: Uint8Array): Promise<Array<string>> => {
  const { extractText } = await import("unpdf")
  // pdf.js takes the buffer over (detaches it): give it a copy.
  return (await extractText(new Uint8Array(bytes), { mergePages: false })).text
}

/**
 * mammoth reads the whole zip in memory: its parts' sizes are checked first (by
 * inflating them, so no declared size can lie), against the same bound as the others.
 */
const checkedDocx = async (bytes: Uint8Array): Promise<Buffer> => {
  const buffer = Buffer.from(bytes)
  await readParts(buffer, () => true)
  return buffer
}

/** A DOCX's paragraphs as plain text (each paragraph, empty ones too, in order). */
export const docxParagraphs = async (bytes: Uint8Array): Promise<Array<string>> => {
  const { default: mammoth } = await import("mammoth")
  const { value } = await mammoth.extractRawText({ buffer: await checkedDocx(bytes) })
  // mammoth ends every paragraph with a blank line.
  return value.replace(/\n\n$/, "").split("\n\n")
}

const docxMarkdown = async (bytes: Uint8Array): Promise<string> => {
  const [{ default: mammoth }, { default: Turndown }] = await Promise.all([import("mammoth"), import("turndown")])
  const { value } = await mammoth.convertToHtml({ buffer: await checkedDocx(bytes) })
  return new Turndown({ headingStyle: "atx", bulletListMarker: "*" }).turndown(value)
}

const pptxMarkdown = async (bytes: Uint8Array): Promise<string> =>
  (await pptxSlides(Buffer.from(bytes))).map((shapes, i) =>
    [`<!-- Slide number: ${i + 1} -->`, ...shapes.map(({ isTitle, text }) => (isTitle ? `# ${text}` : text))]
      .join("\n")
  ).join("\n\n")

const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ")
const tableLine = (cells: ReadonlyArray<string>) => `| ${cells.map(cell).join(" | ")} |`

const xlsxMarkdown = async (bytes: Uint8Array): Promise<string> =>
  (await xlsxSheets(Buffer.from(bytes))).map(({ name, rows }) => {
    const [header = [], ...body] = rows
    return [`## ${name}`, tableLine(header), tableLine(header.map(() => "---")), ...body.map(tableLine)].join("\n")
  }).join("\n\n")

/** The documents `view` converts, by lower-case extension. */
const MARKDOWN: Readonly<Record<string, (bytes: Uint8Array) => Promise<string>>> = {
  ".pdf": async (bytes) => (await pdfPages(bytes)).join("\n\n"),
  ".docx": docxMarkdown,
  ".pptx": pptxMarkdown,
  ".xlsx": xlsxMarkdown
}

/** The Markdown `view` shows for a document, or null for an extension it cannot convert (audio). */
export const documentMarkdown = (extension: string): ((bytes: Uint8Array) => Promise<string>) | null =>
  MARKDOWN[extension] ?? null
