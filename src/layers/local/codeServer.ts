/**
 * The code-server a local server's `vscode` plugin runs. Inside an image it is installed at a fixed
 * place; on this machine it usually is not, and the server would then start without the IDE (a
 * warning in its log, no `info.urls.vscode`), which a caller who asked for VS Code does not expect.
 * So LocalRuntime finds the package directory (its option, else `EFFECT_SANDBOX_CODE_SERVER`, else
 * the tools image's path) and refuses to start when code-server is not there, saying how to get it.
 */
import { Config, Effect, Option } from "effect"
import { existsSync } from "node:fs"
import { resolve } from "node:path"
import { InvalidOptionsError } from "../../schema/errors.ts"
import { CODE_SERVER_VARIABLE, codeServerEntry, DEFAULT_CODE_SERVER } from "../../server/vscode/codeServer.ts"

/** Where the package directory was named, for the error. */
const chosen = Effect.fn("LocalRuntime.chooseCodeServer")(function*(given: string | undefined) {
  if (given !== undefined) return { dir: given, source: "the codeServer option" }
  const fromEnv = Option.getOrUndefined(yield* Config.option(Config.String(CODE_SERVER_VARIABLE)))
  return fromEnv !== undefined && fromEnv !== ""
    ? { dir: fromEnv, source: CODE_SERVER_VARIABLE }
    : { dir: DEFAULT_CODE_SERVER, source: "the default" }
})

/**
 * The absolute code-server package directory for `vscode: true` (undefined when VS Code is off),
 * or an `InvalidOptionsError` naming the directory looked in, where it came from, and the two ways
 * to get an IDE: install code-server there, or use DockerRuntime on the tools image.
 */
export const localCodeServer = Effect.fn("LocalRuntime.localCodeServer")(function*(
  options: { readonly vscode?: boolean; readonly codeServer?: string }
) {
  if (options.vscode !== true) return undefined
  const { dir, source } = yield* chosen(options.codeServer)
  // The server runs it from its workspace: a relative path must not depend on where that is.
  const absolute = resolve(dir)
  if (existsSync(codeServerEntry(absolute))) return absolute
  return yield* new InvalidOptionsError({
    message: `Invalid LocalRuntime options: codeServer: vscode needs code-server on this machine, and ` +
      `${absolute} (${source}) has none (no out/node/entry.js). Install it with \`npm install code-server@4\` ` +
      `(run by this Node) in a directory D and name D/node_modules/code-server in codeServer or ` +
      `${CODE_SERVER_VARIABLE}, or use DockerRuntime on the tools image, which has it at /opt/code-server.`
  })
})
