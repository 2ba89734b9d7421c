/**
 * Whether the conformance suite can browse here: a Chromium must be installed.
 * In CI it must be (CI installs Debian's chromium); on a laptop without one the
 * browser cases are skipped, and this says why.
 */
import { findChromium } from "../../src/executor/browser/chromium.ts"

export const chromiumAvailable = (): boolean => {
  const ok = findChromium() !== null
  if (!ok && process.env["CI"] === "true") {
    throw new Error("Browser tests need Chromium in CI: install Debian's chromium package (.ci/run does).")
  }
  if (!ok) console.warn("Browser conformance cases skipped: no Chromium found (apt install chromium).")
  return ok
}
