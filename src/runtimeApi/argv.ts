/**
 * The command line of `effect-sandbox-runtime-api`:
 *   [--port N] [--host H] [--provisioner docker] [--proxy] [--public-url URL] [--vscode-domain D]
 *   [--max-sandboxes N] [--idle-pause-after SECONDS] [--idle-stop-after SECONDS]
 *   [--cpus N] [--memory-mb N] [--container-name-prefix P] [--registry-prefix P] [--sandbox-uid N]
 *   [--build-concurrency N] [--build-timeout SECONDS] [--build-memory-mb N] [--build-cpus N]
 *   [--build-network NAME] [--build-cgroup-parent P] [--build-max-upload-mb N]
 *   with `--provisioner kubernetes`: [--namespace NS] [--kube-connect direct|port-forward]
 *   [--pvc-storage-size Q] [--pvc-storage-class C] [--delete-workspace]
 * (the cluster from `KUBECONFIG`, ~/.kube/config or the pod's service account).
 * The API key and the sandbox configuration come from the environment (main.ts), never argv,
 * where any local user could read them in `ps`.
 */

import { unsafeRegistryPrefix } from "./buildTags.ts"

/** The provisioners the API can run sandboxes on. */
export const PROVISIONERS = ["docker", "kubernetes"] as const

/** How the API server reaches the pods (`--kube-connect`); default: direct inside a cluster. */
const KUBE_CONNECT = { direct: "direct", "port-forward": "portForward" } as const

/** The options only the Kubernetes provisioner takes. */
const KUBERNETES_OPTIONS = [
  "--namespace",
  "--kube-connect",
  "--pvc-storage-size",
  "--pvc-storage-class",
  "--delete-workspace"
] as const

/** The options taking one value (beside the numeric ones). */
const VALUE_OPTIONS: ReadonlySet<string> = new Set([
  "--port",
  "--host",
  "--provisioner",
  "--public-url",
  "--vscode-domain",
  "--container-name-prefix",
  "--registry-prefix",
  "--build-network",
  "--build-cgroup-parent",
  "--namespace",
  "--kube-connect",
  "--pvc-storage-size",
  "--pvc-storage-class"
])

export interface RuntimeApiArgs {
  readonly port: number
  readonly host: string
  readonly provisioner: (typeof PROVISIONERS)[number]
  readonly proxy: boolean
  readonly publicUrl: string | undefined
  /** Proxy mode: IDE hosts are `<runtime_id>-<mac>.<D>` (runtimeApi/vscodeHosts.ts). */
  readonly vscodeDomain: string | undefined
  readonly maxSandboxes: number | undefined
  readonly idlePauseAfterSeconds: number | undefined
  readonly idleStopAfterSeconds: number | undefined
  readonly cpus: number | undefined
  readonly memoryMb: number | undefined
  /** The uid (and gid) our server runs as in the sandboxes; default runtimeImage/sandboxUser.ts's. */
  readonly sandboxUid: number | undefined
  readonly containerNamePrefix: string | undefined
  /** `/registry_prefix`: what OpenHands names the images it builds here under (`<prefix>/runtime:...`). */
  readonly registryPrefix: string
  /** `/build`'s limits (dockerImages.ts): builds at once, seconds each, and what a step may use. */
  readonly buildConcurrency: number
  readonly buildTimeoutSeconds: number
  readonly buildMemoryMb: number
  readonly buildCpus: number
  /** `none`, or a network made for builds; never the host's. */
  readonly buildNetwork: string
  readonly buildCgroupParent: string | undefined
  readonly buildMaxUploadMb: number
  /** `--provisioner kubernetes`'s (checked by checkKubernetesOptions as the backend starts). */
  readonly namespace: string | undefined
  readonly kubeConnect: "direct" | "portForward" | undefined
  readonly pvcStorageSize: string | undefined
  readonly pvcStorageClass: string | undefined
  readonly deleteWorkspace: boolean
}

export const RUNTIME_API_USAGE =
  "usage: effect-sandbox-runtime-api [--port N] [--host HOST] [--provisioner docker|kubernetes] [--proxy] " +
  "[--public-url URL] [--vscode-domain DOMAIN] [--max-sandboxes N] [--idle-pause-after SECONDS] [--idle-stop-after SECONDS] [--cpus N] " +
  "[--memory-mb N] [--container-name-prefix PREFIX] [--registry-prefix PREFIX] [--sandbox-uid N] " +
  "[--build-concurrency N] [--build-timeout SECONDS] [--build-memory-mb N] [--build-cpus N] " +
  "[--build-network NAME] [--build-cgroup-parent CGROUP] [--build-max-upload-mb N] " +
  "[--namespace NS] [--kube-connect direct|port-forward] [--pvc-storage-size QUANTITY] " +
  "[--pvc-storage-class CLASS] [--delete-workspace]"

export type ParsedRuntimeApiArgs =
  | { readonly _tag: "Ok"; readonly args: RuntimeApiArgs }
  | { readonly _tag: "Error"; readonly message: string }

const error = (message: string): ParsedRuntimeApiArgs => ({
  _tag: "Error",
  message: `${message}\n${RUNTIME_API_USAGE}`
})

/** A positive decimal number (integer when `integer`), or null. */
const positive = (text: string | undefined, integer: boolean): number | null => {
  if (text === undefined || !(integer ? /^\d+$/ : /^\d+(\.\d+)?$/).test(text)) return null
  const value = Number(text)
  return value > 0 ? value : null
}

export const parseRuntimeApiArgs = (argv: ReadonlyArray<string>): ParsedRuntimeApiArgs => {
  const args: { -readonly [K in keyof RuntimeApiArgs]: RuntimeApiArgs[K] } = {
    port: 8000,
    host: "127.0.0.1",
    provisioner: "docker",
    proxy: false,
    publicUrl: undefined,
    vscodeDomain: undefined,
    maxSandboxes: undefined,
    idlePauseAfterSeconds: undefined,
    idleStopAfterSeconds: undefined,
    cpus: undefined,
    memoryMb: undefined,
    sandboxUid: undefined,
    containerNamePrefix: undefined,
    registryPrefix: "effect-sandbox",
    buildConcurrency: 2,
    buildTimeoutSeconds: 1200,
    buildMemoryMb: 2048,
    buildCpus: 1,
    buildNetwork: "none",
    buildCgroupParent: undefined,
    buildMaxUploadMb: 512,
    namespace: undefined,
    kubeConnect: undefined,
    pvcStorageSize: undefined,
    pvcStorageClass: undefined,
    deleteWorkspace: false
  }
  /** Numeric options: where each goes and whether it must be an integer. */
  const numeric = {
    "--max-sandboxes": ["maxSandboxes", true],
    "--idle-pause-after": ["idlePauseAfterSeconds", false],
    "--idle-stop-after": ["idleStopAfterSeconds", false],
    "--cpus": ["cpus", false],
    "--memory-mb": ["memoryMb", true],
    "--build-concurrency": ["buildConcurrency", true],
    "--build-timeout": ["buildTimeoutSeconds", false],
    "--build-memory-mb": ["buildMemoryMb", true],
    "--build-cpus": ["buildCpus", false],
    "--build-max-upload-mb": ["buildMaxUploadMb", true],
    "--sandbox-uid": ["sandboxUid", true]
  } as const
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const value = argv[i + 1]
    if (arg === "--proxy") {
      args.proxy = true
      continue
    }
    if (arg === "--delete-workspace") {
      args.deleteWorkspace = true
      continue
    }
    if (!(arg in numeric) && !VALUE_OPTIONS.has(arg)) return error(`unrecognized argument: ${arg}`)
    if (value === undefined || value.startsWith("--")) return error(`${arg} needs a value`)
    i++
    if (arg in numeric) {
      const [field, integer] = numeric[arg as keyof typeof numeric]
      const number = positive(value, integer)
      if (number === null) return error(`${arg} needs a positive ${integer ? "integer" : "number"}, got ${value}`)
      args[field] = number
      continue
    }
    switch (arg) {
      case "--port": {
        if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) return error(`invalid port: ${value}`)
        args.port = Number(value)
        break
      }
      case "--host":
        args.host = value
        break
      case "--provisioner": {
        const known = PROVISIONERS.find((p) => p === value)
        if (known === undefined) return error(`unknown provisioner ${value} (known: ${PROVISIONERS.join(", ")})`)
        args.provisioner = known
        break
      }
      case "--public-url": {
        if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
          return error(`--public-url needs an http(s) URL, got ${value}`)
        }
        args.publicUrl = value
        break
      }
      case "--vscode-domain": {
        // Names under it are `<60-character label>.<domain>`: a host name holds 253 characters.
        if (!/^(?=.{1,190}$)([a-z0-9]([a-z0-9-]*[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(value)) {
          return error(
            `--vscode-domain needs a lower-case DNS name (its names' host is <label>.<domain>), got ${value}`
          )
        }
        args.vscodeDomain = value
        break
      }
      case "--container-name-prefix":
        args.containerNamePrefix = value
        break
      case "--registry-prefix": {
        const unsafe = unsafeRegistryPrefix(value)
        if (unsafe !== undefined) return error(unsafe)
        args.registryPrefix = value
        break
      }
      case "--build-network": {
        if (value === "host" || value.startsWith("container:")) {
          return error(`--build-network ${value} would give build steps the host's or a container's network`)
        }
        args.buildNetwork = value
        break
      }
      case "--build-cgroup-parent":
        args.buildCgroupParent = value
        break
      case "--namespace":
        args.namespace = value
        break
      case "--kube-connect": {
        if (!(value in KUBE_CONNECT)) return error(`--kube-connect is direct or port-forward, got ${value}`)
        args.kubeConnect = KUBE_CONNECT[value as keyof typeof KUBE_CONNECT]
        break
      }
      case "--pvc-storage-size":
        args.pvcStorageSize = value
        break
      case "--pvc-storage-class":
        args.pvcStorageClass = value
        break
      default:
        return error(`unrecognized argument: ${arg}`)
    }
  }
  if (args.provisioner !== "kubernetes") {
    const given = KUBERNETES_OPTIONS.find((option) => argv.includes(option))
    if (given !== undefined) return error(`${given} is an option of --provisioner kubernetes`)
  }
  if (
    args.idlePauseAfterSeconds !== undefined && args.idleStopAfterSeconds !== undefined &&
    args.idleStopAfterSeconds <= args.idlePauseAfterSeconds
  ) {
    return error("--idle-stop-after must be longer than --idle-pause-after")
  }
  return { _tag: "Ok", args }
}
