/** Whether the conformance suite can browse here: a Chromium must be installed (see requirement.ts). */
import { findChromium } from "../../src/executor/browser/chromium.ts"
import { required } from "./requirement.ts"

export const chromiumAvailable = (): boolean =>
  required(findChromium() !== null, {
    ci: "Browser tests need Chromium in CI: install Debian's chromium package (.ci/run does).",
    skipped: "Browser conformance cases skipped: no Chromium found (apt install chromium)."
  })
