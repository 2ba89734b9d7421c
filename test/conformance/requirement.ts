/**
 * A piece of the machine some tests need (a Python kernel, Chromium). In CI it
 * must be there (CI installs it), so its absence fails the run; on a laptop
 * without it those cases are skipped, with a message saying what to install.
 */
export const required = (present: boolean, missing: { readonly ci: string; readonly skipped: string }): boolean => {
  if (!present && process.env["CI"] === "true") throw new Error(missing.ci)
  if (!present) console.warn(missing.skipped)
  return present
}
