/**
 * Fault injection shared by every stand-in: a test queues what the next matching requests meet (an
 * error status with `Retry-After`, a slow answer, an answer held until the test lets it go, a
 * connection cut mid-request), and the stand-in asks `take` before it serves a request. One plan
 * for all stand-ins, so the table in `docs/runtimes/README.md` ("what each runtime does with each
 * fault") is measured the same way everywhere. HTTP stand-ins apply a fault with `applyHttpFault`;
 * the gRPC and Kubernetes ones map the same `Fault` onto their own framing.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2"

/** What one request meets. */
export type Fault =
  /** An error answer (429, 500, 502, 503 ...) with the provider's error body. */
  | {
    readonly kind: "status"
    readonly status: number
    readonly message: string
    /** Sent as `Retry-After` (seconds) when set. */
    readonly retryAfterSeconds?: number
  }
  /** The request is served normally after `millis`. */
  | { readonly kind: "delay"; readonly millis: number }
  /** The request is served normally once `until` settles: a slow create a test waits on by condition. */
  | { readonly kind: "hold"; readonly until: Promise<unknown> }
  /**
   * The connection is destroyed after the request arrived and before any answer. Where a stand-in
   * can tell the two apart, the request is served first (what it does is done, only the answer is
   * lost) unless `unserved`: then it never reached the service.
   */
  | { readonly kind: "cut"; readonly unserved?: true }

/** Which requests a fault applies to: a method (any when omitted) and a path test. */
export interface FaultMatch {
  readonly method?: string
  readonly path: string | RegExp
}

interface Rule extends FaultMatch {
  readonly fault: Fault
  remaining: number
}

/** A request that met a fault, for a test to assert on. */
export interface FaultHit {
  readonly method: string
  readonly path: string
  readonly fault: Fault["kind"]
}

const matches = (rule: FaultMatch, method: string, path: string) =>
  (rule.method === undefined || rule.method.toUpperCase() === method.toUpperCase()) &&
  (typeof rule.path === "string" ? path === rule.path || path.startsWith(`${rule.path}/`) : rule.path.test(path))

/** The faults queued on one stand-in. */
export class Faults {
  private readonly rules: Array<Rule> = []
  /** Every request that met a fault, in order. */
  readonly hits: Array<FaultHit> = []

  /** The next `times` (default 1) requests matching `match` meet `fault`; rules apply in the order given. */
  inject(match: FaultMatch, fault: Fault, times = 1): void {
    this.rules.push({ ...match, fault, remaining: times })
  }

  /** Drop every queued fault. */
  clear(): void {
    this.rules.length = 0
  }

  /** The fault this request meets, if any, using up one of its rule's times. */
  take(method: string, path: string): Fault | undefined {
    const index = this.rules.findIndex((rule) => rule.remaining > 0 && matches(rule, method, path))
    if (index < 0) return undefined
    const rule = this.rules[index]!
    rule.remaining -= 1
    if (rule.remaining === 0) this.rules.splice(index, 1)
    this.hits.push({ method, path, fault: rule.fault.kind })
    return rule.fault
  }
}

type AnyRequest = IncomingMessage | Http2ServerRequest
type AnyResponse = ServerResponse | Http2ServerResponse

/** Destroy the transport under a request: the TCP socket on HTTP/1.1, the whole session on HTTP/2. */
const cut = (request: AnyRequest) => {
  if ("stream" in request) request.stream.session?.destroy()
  else request.socket.destroy()
}

/**
 * Apply `fault` to an HTTP request. Resolves `true` when the fault answered (or cut) the request and
 * the stand-in must not serve it, `false` when the stand-in serves it now (after a delay or hold).
 * `errorBody` is the provider's error shape for a status fault (default `{ message }`).
 */
export const applyHttpFault = async (
  fault: Fault,
  request: AnyRequest,
  response: AnyResponse,
  errorBody: (status: number, message: string) => unknown = (_status, message) => ({ message })
): Promise<boolean> => {
  switch (fault.kind) {
    case "status": {
      const headers: Record<string, string> = { "content-type": "application/json" }
      if (fault.retryAfterSeconds !== undefined) headers["retry-after"] = String(fault.retryAfterSeconds)
      ;(response as ServerResponse).writeHead(fault.status, headers)
      ;(response as ServerResponse).end(JSON.stringify(errorBody(fault.status, fault.message)))
      return true
    }
    case "delay":
      await new Promise((resolve) => setTimeout(resolve, fault.millis))
      return false
    case "hold":
      await fault.until.then(() => undefined, () => undefined)
      return false
    case "cut":
      cut(request)
      return true
  }
}
