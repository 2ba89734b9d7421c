/**
 * The file viewer's HTML (spec §2.5): OpenHands' page, titled `File Viewer - <name>`, with an image
 * inlined as base64 and a PDF drawn into one canvas per page by pdf.js. OpenHands loads pdf.js
 * 3.11.174 from cdnjs; no CDN is reachable from a sandbox, so this server serves pdf.js (the
 * `pdfjs-dist` package) itself under `PDFJS_PATH`. Every text from the file system is HTML-escaped
 * (OpenHands interpolates the path raw, so a file name could inject script into the page).
 */
import { extname } from "node:path"

/** OpenHands' supported extensions, in its order (its "Supported extensions are" text lists them so). */
export const SUPPORTED_EXTENSIONS = [".pdf", ".png", ".jpg", ".jpeg", ".gif"] as const

const IMAGE_TYPES: Readonly<Record<string, string>> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif"
}

/** Where the page finds pdf.js and its worker on this server. */
export const PDFJS_PATH = "/pdfjs"

const ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  "\"": "&quot;",
  "'": "&#39;"
}

export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!)

/** OpenHands' error pages: a heading, then the path (and a detail) as paragraphs. */
export const errorPage = (heading: string, ...paragraphs: ReadonlyArray<string>): string =>
  `<h1>${escapeHtml(heading)}</h1>${paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join("")}`

/** The extension as OpenHands compares it (lower case, with its dot; `""` for none). */
export const extensionOf = (path: string): string => extname(path).toLowerCase()

/** OpenHands' refusal of an extension the viewer does not show. */
export const unsupportedMessage = (extension: string): string =>
  `Unsupported file extension: ${extension}. Supported extensions are: ${SUPPORTED_EXTENSIONS.join(", ")}`

export const isSupported = (extension: string): boolean =>
  (SUPPORTED_EXTENSIONS as ReadonlyArray<string>).includes(extension)

/** The body: an `<img>` for an image; for a PDF, a module script that renders every page into a canvas. */
const content = (name: string, extension: string, base64: string): string =>
  extension === ".pdf"
    ? `<script type="module">
import * as pdfjsLib from "${PDFJS_PATH}/pdf.min.mjs"
const container = document.getElementById("viewer-container")
try {
  pdfjsLib.GlobalWorkerOptions.workerSrc = "${PDFJS_PATH}/pdf.worker.min.mjs"
  const bytes = Uint8Array.from(atob(document.getElementById("file-data").textContent), (c) => c.charCodeAt(0))
  const pdf = await pdfjsLib.getDocument({ data: bytes }).promise
  for (let number = 1; number <= pdf.numPages; number++) {
    const page = await pdf.getPage(number)
    const viewport = page.getViewport({ scale: 1.5 })
    const canvas = document.createElement("canvas")
    canvas.className = "page"
    // Named in the accessibility tree, which is what an agent's browser observation shows.
    canvas.setAttribute("role", "img")
    canvas.setAttribute("aria-label", \`Page \${number} of \${pdf.numPages}\`)
    canvas.width = viewport.width
    canvas.height = viewport.height
    container.appendChild(canvas)
    await page.render({ canvasContext: canvas.getContext("2d"), canvas, viewport }).promise
  }
} catch (error) {
  container.innerHTML = '<div class="error"><h2>Error loading file</h2><p></p></div>'
  container.querySelector("p").textContent = error.message
}
</script>
<script type="application/octet-stream;base64" id="file-data">${base64}</script>`
    : `<script>
const img = document.createElement("img")
img.src = "data:${IMAGE_TYPES[extension]};base64,${base64}"
img.alt = ${JSON.stringify(name).replace(/</g, "\\u003c")}
document.getElementById("viewer-container").appendChild(img)
</script>`

/** The page for a supported file (`extension` must be one of `SUPPORTED_EXTENSIONS`). */
export const viewerPage = (name: string, extension: string, bytes: Uint8Array): string =>
  `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>File Viewer - ${escapeHtml(name)}</title>
<style>
body, html { margin: 0; padding: 0; height: 100%; overflow: hidden; font-family: Arial, sans-serif; }
#viewer-container { width: 100%; height: 100vh; overflow: auto; }
.page { margin: 10px auto; display: block; box-shadow: 0 0 10px rgba(0,0,0,0.3); }
.error { color: red; margin: 20px; }
img { max-width: 100%; margin: 20px auto; display: block; }
</style>
</head>
<body>
<div id="viewer-container"></div>
${content(name, extension, Buffer.from(bytes).toString("base64"))}
</body>
</html>`
