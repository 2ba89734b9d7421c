/**
 * A PDF the browser navigates to is a download, as in OpenHands: its headless Chromium has no PDF
 * viewer, so BrowserGym's `goto` of a PDF ends in a download and the agent gets the
 * `FileDownloadObservation`. Debian's chromium in headless mode opens its viewer instead, and no
 * launch flag turns that off; so a tab's document responses are paused (CDP `Fetch`, documents
 * only, nothing else waits) and a PDF is let through with `Content-Disposition: attachment`,
 * which Chromium downloads, keeping the file name the server gave.
 */
import type { CDPSession } from "playwright-core"

/** CDP's `Fetch.HeaderEntry`. */
interface Header {
  readonly name: string
  readonly value: string
}

const isPdf = (headers: ReadonlyArray<Header>) =>
  headers.some(({ name, value }) =>
    name.toLowerCase() === "content-type" && value.trim().toLowerCase().startsWith("application/pdf")
  )

/** The headers with the disposition made `attachment` (an `inline` one keeps its parameters). */
const asAttachment = (headers: ReadonlyArray<Header>): Array<Header> => {
  const disposition = headers.find(({ name }) => name.toLowerCase() === "content-disposition")?.value
  const value = disposition === undefined
    ? "attachment"
    : disposition.replace(/^\s*inline\b/i, "attachment")
  return [
    ...headers.filter(({ name }) => name.toLowerCase() !== "content-disposition"),
    { name: "Content-Disposition", value: value.toLowerCase().startsWith("attachment") ? value : "attachment" }
  ]
}

/** From now on, PDFs `cdp`'s tab navigates to (itself or a frame) are downloaded, not shown. */
export const pdfAsDownload = async (cdp: CDPSession): Promise<void> => {
  cdp.on("Fetch.requestPaused", (paused) => {
    const headers = paused.responseHeaders ?? []
    const sent = paused.responseStatusCode !== undefined && isPdf(headers)
      ? cdp.send("Fetch.continueResponse", {
        requestId: paused.requestId,
        responseCode: paused.responseStatusCode,
        responseHeaders: asAttachment(headers)
      })
      : cdp.send("Fetch.continueRequest", { requestId: paused.requestId })
    // The tab closed meanwhile: nothing is left to continue.
    sent.catch(() => undefined)
  })
  await cdp.send("Fetch.enable", { patterns: [{ resourceType: "Document", requestStage: "Response" }] })
}
