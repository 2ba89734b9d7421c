/**
 * Which sandboxes of the runtime API get VS Code. OpenHands' client asks for the IDE the only way
 * §14 lets it: `vscode` among the `--plugins` of the server command it sends in `/start`; it sends
 * no `VSCODE_PORT` (the port is the API's to choose, as the server's 60000 is). So the API reads
 * the plugin off the command and sets `VSCODE_PORT` itself, and only when it can serve the port:
 * in proxy mode, where `/<runtime_id>/vscode/...` reaches it (vscodeProxy.ts). Elsewhere the
 * variable is removed, the plugin stays off (the server answers a null token) and no client
 * reports a URL nobody could open.
 */
import { pluginsIn } from "../server/commandLine.ts"
import { VSCODE_PORT } from "../serverStart/serverTools.ts"
import type { StartRequest } from "./schemas.ts"

export { VSCODE_PORT }

/** Whether the sandbox of `request` gets VS Code: its command asks for the plugin and the API serves it. */
export const servesVsCode = (request: StartRequest, served: boolean): boolean =>
  served && request.command !== undefined && pluginsIn(request.command).includes("vscode")

/** `environment` with the API's `VSCODE_PORT`: set when the sandbox gets VS Code, removed otherwise. */
export const withVsCodePort = (
  environment: Readonly<Record<string, string>>,
  vscode: boolean
): Record<string, string> => {
  const { VSCODE_PORT: _given, ...rest } = environment
  return vscode ? { ...rest, VSCODE_PORT: String(VSCODE_PORT) } : rest
}
