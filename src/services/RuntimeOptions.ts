/**
 * The options every runtime layer shares, by the same names and with the same meanings, so that
 * swapping `CliRuntime.layer(options)` for `LocalRuntime.layer(options)` or
 * `DockerRuntime.layer(options)` does not silently change what an agent may do. Each runtime's
 * options extend these and add only what is its own (an image, resources, ports...).
 * See docs/runtimes/swapping.md for the table.
 */
import type { McpStdioServer } from "../executor/mcp/McpHub.ts"
import type { EdgeSecret } from "../network/edgeSecrets.ts"
import type { NetworkPolicy } from "../network/policy.ts"
import type { SandboxConfig } from "../schema/SandboxConfig.ts"

/** The tools a runtime runs beside its shell; absent or `false`: off (their actions answer with OpenHands' texts). */
export interface RuntimeTools {
  /**
   * Run IPython cells in a real kernel; `python` needs ipykernel (default /usr/bin/python3; in a
   * container, the image's). The agent_skills helpers (`open_file`, `file_editor`, ...) are imported
   * into it unless `agentSkills: false`, as OpenHands' default agents run jupyter with agent_skills.
   */
  readonly ipython?: boolean | { readonly python?: string; readonly agentSkills?: boolean }
  /**
   * Browse with Chromium, launched on the first browser action; `executablePath` (in a container: a
   * path inside it) defaults to `EFFECT_SANDBOX_CHROMIUM`, then Debian's chromium.
   */
  readonly browser?: boolean | { readonly executablePath?: string }
  /** MCP servers whose tools `callTool` reaches: stdio ones are started (and stopped) with the runtime. */
  readonly mcp?: { readonly stdio?: ReadonlyArray<McpStdioServer> }
  /**
   * VS Code in the browser (OpenHands' `vscode` plugin, run by code-server, which the tools image
   * has) for the workspace, reachable the way the runtime reaches its server, its URL (connection
   * token included) in `info.urls.vscode`. Only a runtime with an action server has it: CliRuntime
   * refuses it rather than start without the IDE that was asked for.
   */
  readonly vscode?: boolean
  /**
   * With `vscode`: code-server's own port proxy (`/proxy/<port>/` on the IDE's origin, for
   * previewing an app the agent runs). Off by default: it serves the agent's pages from the IDE's
   * origin (docs/security.md, "The VS Code plugin").
   */
  readonly vscodePortProxy?: boolean
}

export interface RuntimeOptions extends RuntimeTools {
  /**
   * Workspace directory on this machine (created if missing, never removed); Docker mounts it at
   * /workspace. Default: a temporary directory removed on release.
   */
  readonly workspace?: string | undefined
  /** Keep a temporary workspace after release. */
  readonly keepWorkspace?: boolean | undefined
  /**
   * Refuse file actions (read, write, edit, transfers, listing) on paths outside the workspace, with
   * CLIRuntime's "Invalid path" texts (default true). The workspace is the one the agent sees:
   * `info.workspace` (in a container, /workspace inside it). Commands are not confined by this.
   */
  readonly restrictToWorkspace?: boolean
  /**
   * Extra environment for the runtime's shells (and kernel, MCP servers, browser), over
   * `sandbox.runtimeStartupEnvVars`. Secrets go through `setEnv` with `Redacted` values instead,
   * so that their values are masked in output.
   */
  readonly env?: Readonly<Record<string, string>>
  /** Seconds without output before a command returns partial output (default 10, as OpenHands' server). */
  readonly noChangeTimeoutSeconds?: number
  /** Sandbox settings (timeout, startup variables, ...); default: OpenHands' defaults overridden by `SANDBOX_*`. */
  readonly sandbox?: SandboxConfig
  /** Session id (default: a random UUID); it marks the session's processes (and names Docker's container). */
  readonly sessionId?: string
  /**
   * Most processes (and threads) the session may have at once, so a fork bomb cannot starve the
   * host. Cli and Local: the shells' pids cgroup (default 1024; Linux, as root); Docker: the
   * container's limit (default 4096, as it also holds the server, kernel and browser).
   */
  readonly pidsLimit?: number
  /**
   * What the sandbox may reach on the network (docs/network.md): absent, what it always could (the
   * host's network for Cli and Local, the internet through Docker's bridge, a provider's default);
   * `"deny-all"`; or `{ allowOnly: [...] }` hosts, `*.domains`, addresses and CIDR blocks. Enforced
   * outside the sandbox; a runtime that cannot enforce a rule refuses it at start
   * (InvalidOptionsError naming the runtime and the rule), never lets it through.
   */
  readonly network?: NetworkPolicy
  /**
   * Secrets kept out of the sandbox (docs/secrets.md): each bound to hosts the `network` allow list
   * allows, put on requests to those hosts at the edge (a header, and/or a placeholder in the
   * sandbox's `env` variable swapped for the value). The sandbox only ever holds the placeholder. A
   * runtime without an edge of its own refuses the option (InvalidOptionsError) rather than put the
   * value in the sandbox.
   */
  readonly secrets?: ReadonlyArray<EdgeSecret>
}
