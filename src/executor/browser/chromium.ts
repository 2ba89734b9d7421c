/**
 * Where Chromium is: a configured path, `EFFECT_SANDBOX_CHROMIUM`, or Debian's
 * `chromium` package. Never a browser downloaded by Playwright: the sandbox
 * images and CI install Debian's.
 */
import { existsSync } from "node:fs"

/** Variable naming the Chromium binary, for servers started by a runtime layer. */
export const CHROMIUM_VARIABLE = "EFFECT_SANDBOX_CHROMIUM"

/** Debian's binary first (its /usr/bin/chromium is a wrapper script that adds flags from /etc). */
const CANDIDATES = ["/usr/lib/chromium/chromium", "/usr/bin/chromium", "/usr/bin/chromium-browser"]

/** The Chromium to launch, or null with nothing installed. */
export const findChromium = (configured?: string, env: NodeJS.ProcessEnv = process.env): string | null => {
  const given = configured ?? env[CHROMIUM_VARIABLE]
  if (given !== undefined && given !== "") return given
  return CANDIDATES.find((path) => existsSync(path)) ?? null
}

/** The error text when no Chromium can be found. */
export const NO_CHROMIUM_TEXT = `Browser could not start: no Chromium found (looked in ${CANDIDATES.join(", ")}). ` +
  `Install Debian's chromium package or set ${CHROMIUM_VARIABLE} to the binary.`
