/**
 * Where the `vscode` plugin finds code-server: a package directory (`npm install code-server`),
 * whose entry script runs on the server's Node. The server reads it from its environment; a
 * runtime that starts a server on this machine (LocalRuntime) checks it is there first.
 */
import { join } from "node:path"

/** Where the tools image installs code-server (`npm install code-server` in /opt/code-server). */
export const DEFAULT_CODE_SERVER = "/opt/code-server/node_modules/code-server"

/** The variable naming another package directory (server/serve.ts reads it). */
export const CODE_SERVER_VARIABLE = "EFFECT_SANDBOX_CODE_SERVER"

/** The script of a code-server package directory that starts it. */
export const codeServerEntry = (codeServer: string): string => join(codeServer, "out", "node", "entry.js")

/**
 * The variable that turns code-server's own port proxy on (`1`): `/proxy/<port>/` and
 * `/absproxy/<port>/` serve whatever listens on a port in the sandbox from the IDE's origin, so
 * an agent's pages would run there; off (`--disable-proxy`) unless asked for (`vscodePortProxy`).
 */
export const PORT_PROXY_VARIABLE = "EFFECT_SANDBOX_VSCODE_PORT_PROXY"
