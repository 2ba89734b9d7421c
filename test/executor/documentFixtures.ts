/**
 * Small documents made in the tests: a two-page PDF (Helvetica, one text line per
 * page), and minimal but valid .docx, .pptx and .xlsx packages (the parts Word,
 * PowerPoint and Excel readers need). Their texts are what the tests expect back.
 */
import { ZipFile } from "yazl"

const zip = (parts: Readonly<Record<string, string>>): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const file = new ZipFile()
    for (const [name, text] of Object.entries(parts)) file.addBuffer(Buffer.from(text), name)
    file.end()
    const chunks: Array<Buffer> = []
    file.outputStream.on("data", (c: Buffer) => chunks.push(c)).on("error", reject).on(
      "end",
      () => resolve(Buffer.concat(chunks))
    )
  })

const XML = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
const REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
const PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"

const contentTypes = (overrides: Readonly<Record<string, string>>) =>
  `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">`
  + `<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>`
  + `<Default Extension="xml" ContentType="application/xml"/>`
  + Object.entries(overrides).map(([part, type]) => `<Override PartName="${part}" ContentType="${type}"/>`).join("")
  + `</Types>`

const rels = (targets: ReadonlyArray<readonly [id: string, type: string, target: string]>) =>
  `${XML}<Relationships xmlns="${PKG_REL}">`
  + targets.map(([id, type, target]) => `<Relationship Id="${id}" Type="${REL}/${type}" Target="${target}"/>`).join(
    ""
  )
  + `</Relationships>`

/** Paragraphs: "Quarterly report" (Heading 1), "Sales grew by 5% & costs fell.", "", "The end." */
export const docx = () =>
  zip({
    "[Content_Types].xml": contentTypes({
      "/word/document.xml": "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
    }),
    "_rels/.rels": rels([["rId1", "officeDocument", "word/document.xml"]]),
    "word/document.xml": `${XML}<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">`
      + `<w:body>`
      + `<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Quarterly report</w:t></w:r></w:p>`
      + `<w:p><w:r><w:t xml:space="preserve">Sales grew by 5% </w:t></w:r><w:r><w:t>&amp; costs fell.</w:t></w:r></w:p>`
      + `<w:p/>`
      + `<w:p><w:r><w:t>The end.</w:t></w:r></w:p>`
      + `</w:body></w:document>`
  })

const P = "http://schemas.openxmlformats.org/presentationml/2006/main"
const A = "http://schemas.openxmlformats.org/drawingml/2006/main"

const shape = (placeholder: string | null, ...paragraphs: ReadonlyArray<string>) =>
  `<p:sp><p:nvSpPr><p:cNvPr id="2" name="s"/><p:cNvSpPr/><p:nvPr>${
    placeholder === null ? "" : `<p:ph type="${placeholder}"/>`
  }</p:nvPr></p:nvSpPr><p:spPr/>`
  + `<p:txBody><a:bodyPr/>${paragraphs.map((t) => `<a:p><a:r><a:t>${t}</a:t></a:r></a:p>`).join("")}</p:txBody></p:sp>`

const slide = (...shapes: ReadonlyArray<string>) =>
  `${XML}<p:sld xmlns:p="${P}" xmlns:a="${A}"><p:cSld><p:spTree>${shapes.join("")}</p:spTree></p:cSld></p:sld>`

/** Slide 1: title "Welcome", body "First point" / "Second point"; slide 2: a text box "Thanks &lt;all&gt;". */
export const pptx = () =>
  zip({
    "[Content_Types].xml": contentTypes({
      "/ppt/presentation.xml": "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml",
      "/ppt/slides/slide1.xml": "application/vnd.openxmlformats-officedocument.presentationml.slide+xml",
      "/ppt/slides/slide2.xml": "application/vnd.openxmlformats-officedocument.presentationml.slide+xml"
    }),
    "_rels/.rels": rels([["rId1", "officeDocument", "ppt/presentation.xml"]]),
    "ppt/presentation.xml": `${XML}<p:presentation xmlns:p="${P}" xmlns:r="${REL}"><p:sldIdLst>`
      + `<p:sldId id="256" r:id="rId2"/><p:sldId id="257" r:id="rId3"/></p:sldIdLst></p:presentation>`,
    "ppt/_rels/presentation.xml.rels": rels([["rId2", "slide", "slides/slide1.xml"], [
      "rId3",
      "slide",
      "slides/slide2.xml"
    ]]),
    "ppt/slides/slide1.xml": slide(shape("title", "Welcome"), shape("body", "First point", "Second point")),
    "ppt/slides/slide2.xml": slide(shape(null, "Thanks &lt;all&gt;"))
  })

/** Sheet "Sales": Name | Units / Widget | 12 / Gadget | (empty) ; sheet "Notes": A1 "ok" (inline), B1 TRUE. */
export const xlsx = () =>
  zip({
    "[Content_Types].xml": contentTypes({
      "/xl/workbook.xml": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"
    }),
    "_rels/.rels": rels([["rId1", "officeDocument", "xl/workbook.xml"]]),
    "xl/workbook.xml":
      `${XML}<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="${REL}">`
      + `<sheets><sheet name="Sales" sheetId="1" r:id="rId1"/><sheet name="Notes" sheetId="2" r:id="rId2"/></sheets></workbook>`,
    "xl/_rels/workbook.xml.rels": rels([["rId1", "worksheet", "worksheets/sheet1.xml"], [
      "rId2",
      "worksheet",
      "worksheets/sheet2.xml"
    ], ["rId3", "sharedStrings", "sharedStrings.xml"]]),
    "xl/sharedStrings.xml":
      `${XML}<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="4" uniqueCount="4">`
      + `<si><t>Name</t></si><si><t>Units</t></si><si><t>Widget</t></si><si><r><t>Gad</t></r><r><t>get</t></r></si></sst>`,
    "xl/worksheets/sheet1.xml": `${XML}<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">`
      + `<sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>`
      + `<row r="2"><c r="A2" t="s"><v>2</v></c><c r="B2"><v>12</v></c></row>`
      + `<row r="3"><c r="A3" t="s"><v>3</v></c></row></sheetData></worksheet>`,
    "xl/worksheets/sheet2.xml": `${XML}<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">`
      + `<sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>ok</t></is></c><c r="B1" t="b"><v>1</v></c></row>`
      + `</sheetData></worksheet>`
  })

/** A PDF with one line of Helvetica text on each page, with a correct cross-reference table. */
export const pdf = (pages: ReadonlyArray<string>): Buffer => {
  const objects: Array<string> = []
  const pageIds = pages.map((_, i) => 4 + 2 * i)
  objects[1] = "<< /Type /Catalog /Pages 2 0 R >>"
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(" ")}] /Count ${pages.length} >>`
  objects[3] = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
  pages.forEach((text, i) => {
    const stream = `BT /F1 18 Tf 72 720 Td (${text.replace(/[()\\]/g, "\\$&")}) Tj ET`
    objects[pageIds[i]!] = "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
      + `/Resources << /Font << /F1 3 0 R >> >> /Contents ${pageIds[i]! + 1} 0 R >>`
    objects[pageIds[i]! + 1] = `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`
  })
  let out = "%PDF-1.4\n"
  const offsets: Array<number> = []
  for (let id = 1; id < objects.length; id++) {
    offsets[id] = out.length
    out += `${id} 0 obj\n${objects[id]}\nendobj\n`
  }
  const xref = out.length
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`
  for (let id = 1; id < objects.length; id++) out += `${String(offsets[id]).padStart(10, "0")} 00000 n \n`
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return Buffer.from(out, "latin1")
}
