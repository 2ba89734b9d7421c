/**
 * How the hosted runtime tells a driver to start the action server (services/Driver.ts
 * `ServerLaunch`): the argv and environment made from the shared options once, so every provider
 * starts the same server the same way; the driver adds only where Node and the entry are and how
 * the session key reaches the server.
 */
import { Redacted } from "effect"
import { shellQuote } from "../quoting/shellQuote.ts"
import { restrictsToWorkspace } from "../runtime/options.ts"
import type { SandboxConfig } from "../schema/SandboxConfig.ts"
import { sandboxServerEnv, serverCommand } from "../server/commandLine.ts"
import { sessionKeyDigestEnv } from "../server/sessionKey.ts"
import { IMAGE_FILES, type ServerFiles } from "../serverStart/serverProbe.ts"
import { vscodeEnv } from "../serverStart/serverTools.ts"
import type { SandboxSpec, ServerLaunch } from "../services/Driver.ts"
import type { HostedOptions } from "./options.ts"
import { IMAGE_WORKSPACE, imageServerLine } from "./serverFiles.ts"

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
 * The shell line that starts the server where a provider runs shell lines (`files` from
 * serverFiles.ts): the session key's SHA-256 set for it alone, before the argv, never the key
 * (server/sessionKey.ts). Handed over with the command that starts the server, it costs no call
 * of its own (a key file to upload did, and the server had to read and remove it); the
 * sandbox's tags hold the key anyway, for attach.
 */
export const serverShellLine = (spec: SandboxSpec, files: ServerFiles & { readonly workspace: string }) =>
  [
    ...Object.entries(sessionKeyDigestEnv(Redacted.value(spec.sessionKey))).map(([name, value]) => `${name}=${value}`),
    ...spec.server.argv({ ...files, workingDir: files.workspace }).map(shellQuote)
  ].join(" ")

/**
 * `imageServerLine` for the image's own server, the key's digest set for it alone (`env`: `exec`
 * takes no variable assignments before the command). Run by a shell of its own (`sh -c`, a
 * subshell), since it `exec`s the server or exits.
 */
export const imageServerShellLine = (spec: SandboxSpec) =>
  imageServerLine(`env ${serverShellLine(spec, { ...IMAGE_FILES, workspace: IMAGE_WORKSPACE })}`)
