#!/usr/bin/env node
/**
 * `effect-sandbox-runtime-api`: OpenHands' remote runtime API (spec §14) on this Docker host or
 * a Kubernetes cluster (argv.ts for the options). The API key is `EFFECT_SANDBOX_API_KEY` and the sandboxes' settings
 * are `SANDBOX_*` (SandboxConfig). It listens on 127.0.0.1 unless told otherwise, and refuses any
 * other host without a key. Once listening it prints one line on stdout:
 *   effect-sandbox-runtime-api listening {"host":"127.0.0.1","port":8000}
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Duration, Effect, Layer, Redacted } from "effect"
import { HttpServer } from "effect/http"
import { DockerEngine } from "../engines/docker/engine.ts"
import { ImageBuilder } from "../engines/docker/imageBuilder.ts"
import { connectMode } from "../engines/kubernetes/podOptions.ts"
import type { SandboxConfig } from "../schema/SandboxConfig.ts"
import { sandboxConfigFromEnv } from "../schema/SandboxConfig.ts"
import { isLoopback } from "../server/exposure.ts"
import { otlpLayerFromEnv } from "../telemetry/otlp.ts"
import { parseRuntimeApiArgs, type RuntimeApiArgs } from "./argv.ts"
import { dockerImages } from "./dockerImages.ts"
import { dockerSandboxes } from "./dockerSandboxes.ts"
import { kubernetesSandboxes } from "./kubernetesSandboxes.ts"
import { urlHost } from "./routes.ts"
import * as RuntimeApi from "./RuntimeApi.ts"
import { ideDomain } from "./vscodeHosts.ts"

export const RUNTIME_API_LISTENING = "effect-sandbox-runtime-api listening "

/** A usage error: on stderr, exit code 2. */
const refuse = (message: string) =>
  Effect.sync(() => {
    process.stderr.write(`${message}\n`)
    process.exitCode = 2
  })

const seconds = (value: number | undefined) => value === undefined ? undefined : Duration.seconds(value)

const run = (args: RuntimeApiArgs, env: NodeJS.ProcessEnv) =>
  Effect.gen(function*() {
    const key = env["EFFECT_SANDBOX_API_KEY"]
    if (!isLoopback(args.host) && !key) {
      return yield* refuse(
        `Refusing to listen on ${args.host} without an API key: anyone who can reach it could start sandboxes. ` +
          "Set EFFECT_SANDBOX_API_KEY, or listen on 127.0.0.1 (the default)."
      )
    }
    const sandbox = yield* sandboxConfigFromEnv
    if (sandbox.useHostNetwork) {
      return yield* refuse("SANDBOX_USE_HOST_NETWORK is not supported by the runtime API: sandboxes would share ports.")
    }
    const announce = Layer.effectDiscard(Effect.gen(function*() {
      const server = yield* HttpServer.HttpServer
      if (server.address._tag === "UnixPathAddress") return
      process.stdout.write(
        `${RUNTIME_API_LISTENING}${JSON.stringify({ host: args.host, port: server.address.port })}\n`
      )
    }))
    const vscodeDomain = args.proxy ? ideDomain(args.vscodeDomain, publicHostname(args)) : undefined
    if (args.proxy && vscodeDomain === undefined) {
      process.stderr.write(
        "VS Code is off: each sandbox's IDE needs a host of its own, and the public URL is not on loopback " +
          "(where <label>.localhost serves): give --vscode-domain D, a domain whose every name reaches this server.\n"
      )
    }
    const api = RuntimeApi.layer({
      port: args.port,
      host: args.host,
      apiKey: key ? Redacted.make(key) : undefined,
      proxy: args.proxy,
      publicUrl: args.publicUrl,
      vscodeDomain,
      idlePauseAfter: seconds(args.idlePauseAfterSeconds),
      idleStopAfter: seconds(args.idleStopAfterSeconds)
    })
    if (args.provisioner === "kubernetes" && connectMode(args.kubeConnect) === "portForward" && !args.proxy) {
      return yield* refuse(
        "--provisioner kubernetes outside a cluster reaches pods through port-forwards of this process only: " +
          "add --proxy, so that clients reach them through this server."
      )
    }
    const backend = backendOf(args, sandbox, vscodeDomain !== undefined).pipe(
      Layer.merge(dockerImages(buildOptionsOf(args))),
      Layer.provide(ImageBuilder.layer),
      Layer.provideMerge(DockerEngine.layer)
    )
    return yield* Layer.launch(announce.pipe(Layer.provideMerge(api), Layer.provide(backend))).pipe(
      // The backend's options and cluster are checked as it starts: a bad one is a usage error too.
      Effect.catchTags({ InvalidOptionsError: (e) => refuse(e.message), RuntimeStartError: (e) => refuse(e.message) })
    )
  })

/** The entries that are set (options are optional keys, never `undefined` values). */
const defined = <A extends Record<string, unknown>>(record: A) =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined))

/** The host name clients reach this server at (`--public-url`'s, else the one listened on). */
const publicHostname = (args: RuntimeApiArgs) =>
  args.publicUrl !== undefined ? new URL(args.publicUrl).hostname : urlHost(args.host)

/** `/build`'s options from the command line. */
const buildOptionsOf = (args: RuntimeApiArgs) => ({
  registryPrefix: args.registryPrefix,
  maxUploadBytes: args.buildMaxUploadMb * 1024 * 1024,
  concurrency: args.buildConcurrency,
  timeout: Duration.seconds(args.buildTimeoutSeconds),
  limits: {
    memoryBytes: args.buildMemoryMb * 1024 * 1024,
    cpus: args.buildCpus,
    network: args.buildNetwork,
    cgroupParent: args.buildCgroupParent
  }
})

/** The sandboxes of `--provisioner`; `vscode`: IDEs can be served (proxy mode, with hosts for them). */
const backendOf = (args: RuntimeApiArgs, sandbox: SandboxConfig, vscode: boolean) => {
  const limits = {
    sandbox,
    maxSandboxes: args.maxSandboxes,
    cpus: args.cpus,
    memoryBytes: args.memoryMb === undefined ? undefined : args.memoryMb * 1024 * 1024,
    // VS Code's port is reached through this server only (vscodeProxy.ts), on a host per sandbox:
    // without --proxy, or without such hosts, no client could open it, so the plugin stays off
    // (vscodePlugin.ts).
    vscode
  }
  if (args.provisioner === "docker") {
    return dockerSandboxes({ ...limits, containerNamePrefix: args.containerNamePrefix, sandboxUid: args.sandboxUid })
  }
  return kubernetesSandboxes({
    ...limits,
    labelPrefix: args.containerNamePrefix,
    kubernetes: {
      ...defined({
        namespace: args.namespace,
        connect: args.kubeConnect,
        pvcStorageSize: args.pvcStorageSize,
        pvcStorageClass: args.pvcStorageClass,
        userId: args.sandboxUid
      }),
      deleteWorkspace: args.deleteWorkspace
    }
  })
}

const parsed = parseRuntimeApiArgs(process.argv.slice(2))
if (parsed._tag === "Error") {
  process.stderr.write(`${parsed.message}\n`)
  process.exit(2)
}
// Spans of every request over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set, as the action server does.
run(parsed.args, process.env).pipe(
  Effect.provide(otlpLayerFromEnv({ serviceName: "effect-sandbox-runtime-api" })),
  NodeRuntime.runMain
)
