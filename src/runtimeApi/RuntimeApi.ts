/**
 * The runtime API server as a layer: OpenHands' remote runtime API (spec §14) over the sandboxes
 * and images of a backend (`Sandboxes` and `Images`: Docker today, dockerSandboxes.ts and
 * dockerImages.ts), listening until the layer is
 * released. Releasing it stops the server only: the sandboxes live on, in the engine.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { type Duration, Effect, Layer, type Redacted } from "effect"
import { HttpRouter } from "effect/http"
import { DEFAULT_LIMITS, Limits } from "../executor/limits.ts"
import { closingServer } from "../server/closingServer.ts"
import { serverRedactsSessionKey } from "../telemetry/secretHeaders.ts"
import { Activity, idleSweeper } from "./activity.ts"
import { buildRoutes } from "./buildRoutes.ts"
import { runtimeApiGate } from "./gate.ts"
import { lifecycleRoutes } from "./routes.ts"
import { divertVsCode, type IdeHosting } from "./vscodeProxy.ts"

export interface RuntimeApiOptions {
  readonly port: number
  readonly host: string
  /** `X-API-Key` required on every endpoint; without it only a loopback host is allowed (main.ts). */
  readonly apiKey?: Redacted.Redacted<string> | undefined
  /** Proxy mode: runtime URLs point here and requests to them are forwarded (proxy.ts). */
  readonly proxy?: boolean | undefined
  /** The URL clients reach this server at, for proxy-mode runtime URLs (default from the listening address). */
  readonly publicUrl?: string | undefined
  /**
   * Proxy mode: the domain of the IDE hosts, `<runtime_id>-<mac>.<domain>` (vscodeHosts.ts).
   * Undefined: VS Code is not served (main.ts picks `localhost` for a loopback public URL).
   */
  readonly vscodeDomain?: string | undefined
  readonly idlePauseAfter?: Duration.Duration | undefined
  readonly idleStopAfter?: Duration.Duration | undefined
}

/** Serve the runtime API on `host:port` over the `Sandboxes` in context. */
export const layer = (options: RuntimeApiOptions) => {
  const proxy = options.proxy === true
  const routes = Layer.mergeAll(
    lifecycleRoutes({ proxy, publicUrl: options.publicUrl, host: options.host }),
    buildRoutes,
    runtimeApiGate(options.apiKey, proxy)
  )
  return Layer.merge(
    HttpRouter.serve(routes, { disableListenLog: true, disableLogger: true }).pipe(
      Layer.provide(serverRedactsSessionKey)
    ),
    idleSweeper({ pauseAfter: options.idlePauseAfter, stopAfter: options.idleStopAfter })
  ).pipe(
    Layer.provideMerge(httpServer(options, proxy)),
    Layer.provide(Activity.layer),
    Layer.provide(Layer.succeed(Limits, DEFAULT_LIMITS))
  )
}

/** Node's HTTP server on `host:port`; in proxy mode with VS Code's hosts and path taken off it first (vscodeProxy.ts). */
const httpServer = (options: RuntimeApiOptions, proxy: boolean) => {
  const listen = { port: options.port, host: options.host, disablePreemptiveShutdown: true }
  if (!proxy) return NodeHttpServer.layer(closingServer, listen)
  const server = closingServer()
  const hosting: IdeHosting = {
    domain: options.vscodeDomain,
    // The public URL's scheme and port (the port listened on when none is given: `--port 0`).
    origin: (label) => {
      const address = server.address()
      const url = new URL(
        options.publicUrl ?? `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 80}`
      )
      url.hostname = `${label}.${options.vscodeDomain}`
      return url.origin
    }
  }
  return Layer.unwrap(
    Effect.map(divertVsCode(server, hosting), (diverted) => NodeHttpServer.layer(() => diverted, listen))
  )
}
