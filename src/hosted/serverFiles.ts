/**
 * Where the action server in a sandbox made from someone's image (an E2B template, a Daytona
 * snapshot, a Runloop blueprint) comes from, decided once for every such provider: the runtime
 * image's own Node and payload (docs/image-contract.md: `/opt/effect-sandbox`, found by one probe);
 * else, when allowed, the payload uploaded into the user's home and run by the image's Node, if
 * recent enough; else a start error saying what the image lacks and how to make it, in the same
 * words whichever provider it is. The provider brings its names, a way to run a shell line, and its
 * upload primitive (each SDK uploads differently).
 */
import { Effect } from "effect"
import { dirname, join, posix } from "node:path"
import { shellQuote } from "../quoting/shellQuote.ts"
import { RuntimeStartError } from "../schema/errors.ts"
import { serverPayload } from "../serverStart/payload.ts"
import {
  IMAGE_FILES,
  NODE_MINIMUM,
  parseProbe,
  PROBE,
  recentEnough,
  type ServerFiles
} from "../serverStart/serverProbe.ts"
import type { DriverFailure, ProviderCall } from "../services/Driver.ts"

/** The workspace of a server the image carries: the runtime image gives it to the sandbox user. */
export const IMAGE_WORKSPACE = "/workspace"
/** Where an uploaded payload goes, and where its server works, relative to the user's home. */
const PAYLOAD_DIR = ".effect-sandbox/payload"
const UPLOADED_WORKSPACE = "workspace"

/** The option of the runtimes whose sandboxes start from an image someone made (E2B, Daytona, Runloop). */
export interface UploadPayloadOption {
  /**
   * When the image lacks the payload but has a Node (22.19+) on its PATH, upload the payload at each
   * start and run it with that Node (default true; slower to start; false: such an image is a start
   * error). The workspace is then `~/workspace`, on E2B `/workspace` as ever.
   */
  readonly uploadPayload?: boolean
}

/** A shell line run in the sandbox as the server's user: its standard output. */
export type RunInSandbox = (what: string, command: string) => Effect.Effect<string, DriverFailure>

/** One payload file: its path here, and where it goes in the sandbox (absolute, and from the user's home). */
export interface PayloadFile {
  readonly source: string
  readonly destination: string
  readonly fromHome: string
}

/** What the provider brings: its words, its command runner, its upload primitive. */
export interface ServerSource {
  /** The provider as users know it (`E2B`); its page, docs/runtimes/e2b.md, says how to make its image. */
  readonly provider: string
  /** What it calls the image a sandbox is made from (`template`, `snapshot`, `blueprint`), and its name. */
  readonly noun: string
  readonly name: string
  /** Whether an image without the payload gets it uploaded (the `uploadPayload` option). */
  readonly upload: boolean
  readonly run: RunInSandbox
  /** Put the payload's files into the sandbox, as the user (their directories are made). */
  readonly put: (files: ReadonlyArray<PayloadFile>) => Effect.Effect<unknown, DriverFailure>
  /**
   * The workspace whichever server runs, where the provider makes it itself (beside the probe, so
   * neither tests nor makes it here); default per server.
   */
  readonly workspace?: string
}

/** Node, the server's entry, and the workspace the server works in. */
export interface Located extends ServerFiles {
  readonly workspace: string
}

/** Upload the payload into `home`, for `node` to run. */
const upload = Effect.fn("serverFiles.upload")(function*(source: ServerSource, home: string, node: string) {
  const { directory, manifest } = yield* serverPayload
  const workspace = source.workspace ?? posix.join(home, UPLOADED_WORKSPACE)
  const made = source.workspace === undefined ? [workspace] : []
  const files = manifest.files.map((file) => ({
    source: join(directory, file),
    destination: posix.join(home, PAYLOAD_DIR, file),
    fromHome: posix.join(PAYLOAD_DIR, file)
  }))
  const directories = new Set(files.map((file) => dirname(file.destination)))
  yield* source.run(
    "make the payload's directories",
    `mkdir -p ${[...directories, ...made].map(shellQuote).join(" ")}`
  )
  yield* source.put(files)
  return { node, entry: posix.join(home, PAYLOAD_DIR, "server.mjs"), workspace }
})

/** The server's files in the sandbox: the image's, else the payload uploaded, else what the image lacks. */
export const serverFiles = Effect.fn("serverFiles")(function*(source: ServerSource) {
  const { name, noun } = source
  const [probe = "", writable = "", home = ""] = (yield* source.run(
    "look for the action server",
    `${PROBE}; test -w ${IMAGE_WORKSPACE} && echo writable || echo read-only; echo "$HOME"`
  )).trim().split("\n")
  const probed = parseProbe(probe)
  const refuse = (lack: string, instead = "") =>
    new RuntimeStartError({
      message: `The ${source.provider} ${noun} ${name} ${lack}: make the ${noun} from the runtime image ` +
        `(docs/runtimes/${source.provider.toLowerCase()}.md, "Making the ${noun}")${instead}.`
    })
  if (probed.found === "image") {
    if (source.workspace !== undefined) return { ...IMAGE_FILES, workspace: source.workspace }
    if (writable === "writable") return { ...IMAGE_FILES, workspace: IMAGE_WORKSPACE }
    return yield* refuse(`has no ${IMAGE_WORKSPACE} its user can write`)
  }
  const lacks = `has no action-server payload (${IMAGE_FILES.entry})`
  const minimum = NODE_MINIMUM.join(".")
  if (!source.upload) return yield* refuse(`${lacks} and uploadPayload is off`)
  if (probed.found === "none") {
    return yield* refuse(
      `${lacks} and no Node.js on its PATH to run an uploaded one`,
      `, or use a ${noun} with Node ${minimum} or newer`
    )
  }
  if (recentEnough(probed.version)) return yield* upload(source, home, probed.node)
  return yield* refuse(
    `${lacks}, and its Node.js ${probed.version} (${probed.node}) is older than the ${minimum} the payload needs`,
    `, or use a ${noun} with a newer Node`
  )
})

/** The exit code of `imageServerLine` when the image lacks the server or its workspace (EX_CONFIG). */
export const NO_IMAGE_SERVER = 78
/** What `imageServerLine` prints, on standard output, once it found the image's server: it starts it next. */
export const IMAGE_SERVER_FOUND = "effect-sandbox: the image's server"

/**
 * A shell line, run as the server's user, that starts the image's own server at once where the
 * image has it (docs/image-contract.md: its files and a workspace the user can write), printing
 * `IMAGE_SERVER_FOUND` first; else it exits `NO_IMAGE_SERVER` having started nothing, and the
 * driver asks `serverFiles` (probe, upload, refusal). For a provider whose command API streams
 * the output: the image's server, the usual case, starts without the probe's round trip before.
 * `server` is the server's command line for `IMAGE_FILES` in `IMAGE_WORKSPACE`.
 */
export const imageServerLine = (server: string) =>
  `if [ -x ${IMAGE_FILES.node} ] && [ -f ${IMAGE_FILES.entry} ] && [ -w ${IMAGE_WORKSPACE} ]; then ` +
  `echo "${IMAGE_SERVER_FOUND}" && cd ${IMAGE_WORKSPACE} && exec ${server}; else exit ${NO_IMAGE_SERVER}; fi`

/** The workspace of a sandbox whose server already runs (attach): the image's, or an uploaded server's. */
export const runningWorkspace = (run: RunInSandbox) =>
  Effect.map(
    run(
      "find the workspace",
      `if [ -f ${IMAGE_FILES.entry} ]; then echo ${IMAGE_WORKSPACE}; else echo "$HOME/${UPLOADED_WORKSPACE}"; fi`
    ),
    (stdout) => stdout.trim()
  )

/** How a provider's command API reports a shell line it ran to its end. */
export interface Ended {
  readonly exitCode: number | null | undefined
  readonly stdout: string
  /** All it printed, for the failure. */
  readonly output: string
}

/**
 * A `RunInSandbox` from a provider's command API (`exec`, through its `call`, in `where`): the
 * standard output, else a start error in the words of the provider's other failures.
 */
export const shellLines = (
  provider: string,
  where: string,
  call: ProviderCall,
  exec: (command: string) => PromiseLike<Ended>
): RunInSandbox =>
(what, command) => {
  const operation = `${what} in ${where}`
  return Effect.flatMap(
    call(operation, () => exec(command)),
    (ended) =>
      ended.exitCode === 0 ? Effect.succeed(ended.stdout) : Effect.fail(
        new RuntimeStartError({ message: `${provider} could not ${operation}: ${ended.output.trim()}` })
      )
  )
}
