/**
 * Environment variables added at run time (`Runtime.addEnvVars`). They are kept
 * in a private file (mode 0600) that every shell sources before its next command
 * when the set changed, so the session shell, `is_static` shells and restarted
 * shells all see them, without writing secrets into `~/.bashrc` as OpenHands does.
 * The file is on a tmpfs where the executor can put it there (envDir.ts), not on disk.
 */
import { writeFileSync } from "node:fs"
import { shellQuote } from "../quoting/shellQuote.ts"
import { SecretMask } from "../schema/secrets.ts"

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/** Names a shell cannot export. */
export const invalidEnvNames = (vars: Readonly<Record<string, unknown>>): Array<string> =>
  Object.keys(vars).filter((name) => !NAME.test(name))

export class EnvStore {
  private readonly vars = new Map<string, string>()
  private gen = 0

  readonly file: string
  /** Values added as secrets: every tool masks them in its output (before truncating it). */
  readonly mask = new SecretMask()

  constructor(file: string) {
    this.file = file
  }

  /** Bumped on every change; shells compare it with the generation they sourced. */
  get generation(): number {
    return this.gen
  }

  /** A copy of the variables, for processes started outside a shell. */
  get values(): Record<string, string> {
    return Object.fromEntries(this.vars)
  }

  /**
   * Names are upper-cased as OpenHands does; the values of `secrets` (names in `vars`) are masked from now on.
   * Returns the names that are not valid variable names.
   */
  set(vars: Readonly<Record<string, string>>, secrets: ReadonlyArray<string> = []): Array<string> {
    const invalid = invalidEnvNames(vars)
    if (invalid.length > 0) return invalid
    for (const name of secrets) if (Object.hasOwn(vars, name)) this.mask.add(vars[name]!)
    for (const [name, value] of Object.entries(vars)) this.vars.set(name.toUpperCase(), value)
    this.gen++
    const lines = [...this.vars].map(([name, value]) => `export ${name}=${shellQuote(value)}\n`)
    writeFileSync(this.file, lines.join(""), { mode: 0o600 })
    return []
  }
}
