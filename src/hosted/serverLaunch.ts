/**
 * How the hosted runtime tells a driver to start the action server (services/Driver.ts
 * `ServerLaunch`): the argv and environment made from the shared options once, so every provider
 * starts the same server the same way; the driver adds only where Node and the entry are and how
 * the session key reaches the server.
 */
import { SESSION_KEY_FILE_VARIABLE } from "../executor/childEnv.ts"
import { restrictsToWorkspace } from "../runtime/options.ts"
import type { SandboxConfig } from "../schema/SandboxConfig.ts"
import { sandboxServerEnv, serverCommand } from "../server/commandLine.ts"
import { vscodeEnv } from "../serverStart/serverTools.ts"
import type { SandboxSpec, ServerLaunch } from "../services/Driver.ts"
import type { HostedOptions } from "./options.ts"

/** The action server's port inside a sandbox of its own. */
export const SERVER_PORT = 8000

export const serverLaunch = (
  options: HostedOptions,
  sandbox: SandboxConfig,
  sessionId: string,
  user: SandboxSpec["user"],
  port: number = SERVER_PORT
): ServerLaunch => ({
  port,
  argv: (where) =>
    serverCommand({
      node: where.node,
      entry: where.entry,
      port: where.port ?? port,
      workingDir: where.workingDir,
      // Reached from outside the sandbox through the provider's proxy: all interfaces, behind the key.
      host: where.host ?? "0.0.0.0",
      username: user.name,
      userId: user.id,
      tools: options,
      restrictToWorkspace: restrictsToWorkspace(options),
      ownerLease: where.ownerLease
    }),
  env: sandboxServerEnv(sandbox, options, sessionId, vscodeEnv(options))
})

/**
 * Where a driver that delivers the session key as a file writes it (in /tmp: the server reads and
 * removes it before it runs anything, server/sessionKey.ts), and the sandbox's environment entry
 * that names it to the server (a path, not the key).
 */
export const SESSION_KEY_FILE = "/tmp/.effect-sandbox-session-key"
export const sessionKeyFileEnv = { [SESSION_KEY_FILE_VARIABLE]: SESSION_KEY_FILE } as const
