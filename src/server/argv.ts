/**
 * The action server's command line, as OpenHands' (spec §2.1):
 *   effect-sandbox-server <port> [--working-dir D] [--plugins NAME...] [--username U]
 *     [--user-id N] [--enable-browser | --no-enable-browser] [--browsergym-eval-env ...]
 * plus our extensions: `--host H` (default 127.0.0.1, unlike OpenHands' 0.0.0.0: safe by default; a
 * host beyond loopback needs SESSION_API_KEY, see exposure.ts), and
 * `--exit-on-stdin-close` (a parent that dies closes our stdin, so we never outlive it), and
 * `--restrict-to-workspace` (file actions refused outside the working directory, as CliRuntime
 * does; off by default as in OpenHands' server, whose sandbox is the boundary; our layers pass it).
 * Port 0 lets the OS pick a free port; the chosen one is announced on stdout.
 */

/** OpenHands' ALL_PLUGINS. */
export const KNOWN_PLUGINS = ["jupyter", "agent_skills", "vscode"] as const
export type PluginName = (typeof KNOWN_PLUGINS)[number]

export interface ServerArgs {
  readonly port: number
  readonly host: string
  readonly workingDir: string | null
  readonly plugins: ReadonlyArray<PluginName>
  readonly username: string
  readonly userId: number
  readonly enableBrowser: boolean
  readonly browsergymEvalEnv: string | null
  readonly exitOnStdinClose: boolean
  /** `--owner-lease FILE`: stop when the owner's lease goes stale (ownerLease.ts). */
  readonly ownerLease: string | null
  /** `--temporary-dir DIR`, repeatable: directories removed when the server stops (temporaryDirs.ts). */
  readonly temporaryDirs: ReadonlyArray<string>
  /** `--restrict-to-workspace`: refuse file actions on paths outside the working directory. */
  readonly restrictToWorkspace: boolean
}

export type ParsedArgs = { readonly _tag: "Ok"; readonly args: ServerArgs } | {
  readonly _tag: "Error"
  readonly message: string
}

export const USAGE =
  "usage: effect-sandbox-server <port> [--working-dir DIR] [--plugins NAME ...] [--username USER] [--user-id N] [--enable-browser | --no-enable-browser] [--browsergym-eval-env ENV ...] [--host HOST] [--exit-on-stdin-close] [--owner-lease FILE] [--temporary-dir DIR] [--restrict-to-workspace]"

/** Plain decimal, as argparse's `int` (no "", "0x1f" or "1e3"). */
const parsePort = (text: string): number | null => {
  if (!/^\d{1,5}$/.test(text)) return null
  const port = Number(text)
  return port <= 65535 ? port : null
}

const error = (message: string): ParsedArgs => ({ _tag: "Error", message: `${message}\n${USAGE}` })

export const parseServerArgs = (argv: ReadonlyArray<string>): ParsedArgs => {
  let port: number | null = null
  let host = "127.0.0.1"
  let workingDir: string | null = null
  const plugins: Array<PluginName> = []
  let username = "openhands"
  let userId = 1000
  let enableBrowser = true
  let browsergymEvalEnv: string | null = null
  let exitOnStdinClose = false
  let ownerLease: string | null = null
  const temporaryDirs: Array<string> = []
  let restrictToWorkspace = false
  /** Values of a flag taking one or more arguments (argparse's nargs="+"). */
  const values = (from: number): Array<string> => {
    const out: Array<string> = []
    for (let j = from; j < argv.length && !argv[j]!.startsWith("--"); j++) out.push(argv[j]!)
    return out
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const one = () => {
      const value = argv[i + 1]
      if (value === undefined || value.startsWith("--")) return null
      i++
      return value
    }
    switch (arg) {
      case "--working-dir": {
        workingDir = one()
        if (workingDir === null) return error("--working-dir needs a directory")
        break
      }
      case "--host": {
        const value = one()
        if (value === null) return error("--host needs an address")
        host = value
        break
      }
      case "--username": {
        const value = one()
        if (value === null) return error("--username needs a name")
        username = value
        break
      }
      case "--user-id": {
        const value = one()
        if (value === null || !/^\d+$/.test(value)) return error("--user-id needs a non-negative integer")
        userId = Number(value)
        break
      }
      case "--plugins": {
        const names = values(i + 1)
        if (names.length === 0) return error("--plugins needs at least one name")
        for (const name of names) {
          if (!(KNOWN_PLUGINS as ReadonlyArray<string>).includes(name)) return error(`Plugin ${name} not found`)
          plugins.push(name as PluginName)
        }
        i += names.length
        break
      }
      case "--browsergym-eval-env": {
        const parts = values(i + 1)
        if (parts.length === 0) return error("--browsergym-eval-env needs a value")
        browsergymEvalEnv = parts.join(" ")
        i += parts.length
        break
      }
      case "--enable-browser":
        enableBrowser = true
        break
      case "--no-enable-browser":
        enableBrowser = false
        break
      case "--exit-on-stdin-close":
        exitOnStdinClose = true
        break
      case "--restrict-to-workspace":
        restrictToWorkspace = true
        break
      case "--owner-lease": {
        ownerLease = one()
        if (ownerLease === null) return error("--owner-lease needs a file")
        break
      }
      case "--temporary-dir": {
        const dir = one()
        if (dir === null) return error("--temporary-dir needs a directory")
        temporaryDirs.push(dir)
        break
      }
      default: {
        if (arg.startsWith("-")) return error(`unrecognized argument: ${arg}`)
        if (port !== null) return error(`unexpected argument: ${arg}`)
        port = parsePort(arg)
        if (port === null) return error(`invalid port: ${arg}`)
      }
    }
  }
  if (port === null) return error("the port is required")
  if (browsergymEvalEnv !== null && !enableBrowser) {
    return error("--browsergym-eval-env needs the browser (BrowserUnavailableException)")
  }
  return {
    _tag: "Ok",
    args: {
      port,
      host,
      workingDir,
      plugins,
      username,
      userId,
      enableBrowser,
      browsergymEvalEnv,
      exitOnStdinClose,
      ownerLease,
      temporaryDirs,
      restrictToWorkspace
    }
  }
}
