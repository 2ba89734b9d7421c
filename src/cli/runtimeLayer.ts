/**
 * The runtime `effect-sandbox run` and `shell` work on (`--runtime`). Each is built with the
 * shared options the flags give; how it reaches its provider (a kubeconfig, an API key and URL)
 * comes from the environment variables its layer already reads (`CLI_RUNTIME_HELP` names them),
 * so the CLI adds no second way to set them; the one
 * flag of its own is `--api-url`, the runtime API of `--runtime remote`, which RemoteRuntime takes
 * as an option only. An option a runtime has no use for is refused in one line by that runtime (a
 * `--workspace` for a cloud sandbox) or here (`--image` where the image is the provider's template
 * or snapshot, `--api-url` off `remote`).
 */
import { Effect, Layer, Option } from "effect"
import { layerByName, type RuntimeName, type RuntimeOptionsByName } from "../runtime/byName.ts"
import { InvalidOptionsError } from "../schema/errors.ts"
import { Runtime } from "../services/Runtime.ts"

/**
 * Each `--runtime` value, in the order `--help` lists them, with what it runs on and the variables
 * its layer reads to reach its provider: `--help` is made from this table, so a runtime added here
 * is described there too.
 */
export const CLI_RUNTIME_HELP = {
  cli: "in this process",
  local: "an action server child process over HTTP",
  docker: "a container (DOCKER_HOST, else the default socket)",
  kubernetes: "a pod (KUBECONFIG)",
  e2b: "an E2B sandbox (E2B_API_KEY)",
  daytona: "a Daytona sandbox (DAYTONA_API_KEY, DAYTONA_API_URL)",
  modal: "a Modal sandbox (MODAL_TOKEN_ID, MODAL_TOKEN_SECRET, MODAL_SERVER_URL)",
  runloop: "a Runloop devbox (RUNLOOP_API_KEY, RUNLOOP_BASE_URL)",
  remote: "a sandbox of a runtime API (--api-url, SANDBOX_API_KEY)"
} as const

/** The `--runtime` values. */
export const CLI_RUNTIMES = Object.keys(CLI_RUNTIME_HELP) as ReadonlyArray<keyof typeof CLI_RUNTIME_HELP>

export type CliRuntimeName = keyof typeof CLI_RUNTIME_HELP

/** The runtimes whose `--image` is the base image of the runtime image they build. */
const TAKES_IMAGE: ReadonlyArray<CliRuntimeName> = ["docker", "kubernetes", "remote"]

export interface CliRuntimeOptions {
  readonly runtime: CliRuntimeName
  readonly image: Option.Option<string>
  readonly apiUrl: Option.Option<string>
  readonly workspace: Option.Option<string>
  readonly noChangeTimeout: number
}

/** The layer of the runtime called `name`: its module is loaded when the layer is built, not at the CLI's start. */
const loaded = <N extends RuntimeName>(
  name: N,
  options: RuntimeOptionsByName[N]
): Layer.Layer<Runtime, { readonly message: string }> => Layer.unwrap(Effect.promise(() => layerByName(name, options)))

/** The layer of `--runtime`, or one failing with the one-line reason it cannot be built so. */
export const cliRuntimeLayer = (options: CliRuntimeOptions): Layer.Layer<Runtime, { readonly message: string }> => {
  const refused = Option.isSome(options.image) && !TAKES_IMAGE.includes(options.runtime)
    ? `--image applies to --runtime ${TAKES_IMAGE.join(", ")} only, not --runtime ${options.runtime}.`
    : Option.isSome(options.apiUrl) && options.runtime !== "remote"
    ? `--api-url applies to --runtime remote only, not --runtime ${options.runtime}.`
    : undefined
  if (refused !== undefined) return Layer.effect(Runtime, Effect.fail(new InvalidOptionsError({ message: refused })))
  const common = {
    noChangeTimeoutSeconds: options.noChangeTimeout,
    ...Option.match(options.workspace, { onNone: () => ({}), onSome: (workspace) => ({ workspace }) })
  }
  // Without --image, the base image is SandboxConfig's (SANDBOX_BASE_CONTAINER_IMAGE or its default).
  const image = Option.match(options.image, { onNone: () => ({}), onSome: (baseImage) => ({ baseImage }) })
  switch (options.runtime) {
    case "cli":
      return loaded("cli", common)
    case "local":
      return loaded("local", common)
    case "docker":
      return loaded("docker", { ...common, ...image })
    case "kubernetes":
      // The session's PVC goes with it, as the other runtimes' temporary workspace does.
      return loaded("kubernetes", { ...common, ...image, deleteWorkspace: true })
    case "e2b":
      return loaded("e2b", common)
    case "daytona":
      return loaded("daytona", common)
    case "modal":
      return loaded("modal", common)
    case "runloop":
      return loaded("runloop", common)
    case "remote":
      return loaded("remote", {
        ...common,
        ...image,
        ...Option.match(options.apiUrl, { onNone: () => ({}), onSome: (apiUrl) => ({ apiUrl }) })
      })
  }
}
