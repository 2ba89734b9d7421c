/**
 * A local OTLP/HTTP receiver for the telemetry tests: a Node HTTP server on 127.0.0.1 that
 * accepts `POST /v1/traces` and `POST /v1/metrics` (JSON or protobuf), keeps every request,
 * and decodes the JSON ones into spans and metric data points.
 */
import { Effect } from "effect"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"

/** One request as received. */
export interface OtlpRequest {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: Buffer
}

/** An OTLP `KeyValue` list as a plain record (string, bool, int and double values). */
const attributesOf = (list: ReadonlyArray<any> | undefined): Record<string, unknown> =>
  Object.fromEntries(
    (list ?? []).map((kv: any) => {
      const v = kv.value ?? {}
      const value = v.stringValue ?? v.boolValue ?? v.doubleValue ??
        (v.intValue === undefined ? v.arrayValue?.values?.map((x: any) => x.stringValue) : Number(v.intValue))
      return [kv.key, value]
    })
  )

export interface ReceivedSpan {
  readonly name: string
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string | undefined
  readonly serviceName: unknown
  readonly attributes: Record<string, unknown>
}

export interface ReceivedPoint {
  readonly metric: string
  readonly serviceName: unknown
  readonly monotonic: boolean | undefined
  readonly attributes: Record<string, unknown>
  readonly value: number | undefined
}

export interface OtlpReceiver {
  readonly endpoint: string
  readonly requests: Array<OtlpRequest>
  /** The spans of every JSON `/v1/traces` request so far. */
  readonly spans: () => Array<ReceivedSpan>
  /** The sum (counter) data points of every JSON `/v1/metrics` request so far, oldest first. */
  readonly sums: () => Array<ReceivedPoint>
  /** Every body received, decoded as UTF-8 (protobuf keeps strings as UTF-8 bytes too). */
  readonly everything: () => string
}

const jsonBodies = (requests: ReadonlyArray<OtlpRequest>, path: string) =>
  requests.filter((r) => r.path === path && r.headers["content-type"]?.includes("json")).map((r) =>
    JSON.parse(r.body.toString("utf8"))
  )

/** Listen on 127.0.0.1 (any free port) until the scope closes. */
export const otlpReceiver = Effect.acquireRelease(
  Effect.callback<{ readonly receiver: OtlpReceiver; readonly close: () => void }>((resume) => {
    const requests: Array<OtlpRequest> = []
    const server = createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk)).on("end", () => {
        requests.push({ path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks) })
        const ok = req.method === "POST" && (req.url === "/v1/traces" || req.url === "/v1/metrics")
        res.writeHead(ok ? 200 : 404, { "content-type": "application/json" }).end("{}")
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      const receiver: OtlpReceiver = {
        endpoint: `http://127.0.0.1:${port}`,
        requests,
        spans: () =>
          jsonBodies(requests, "/v1/traces").flatMap((body) =>
            body.resourceSpans.flatMap((rs: any) =>
              rs.scopeSpans.flatMap((ss: any) =>
                ss.spans.map((span: any) => ({
                  name: span.name,
                  traceId: span.traceId,
                  spanId: span.spanId,
                  parentSpanId: span.parentSpanId,
                  serviceName: attributesOf(rs.resource.attributes)["service.name"],
                  attributes: attributesOf(span.attributes)
                }))
              )
            )
          ),
        sums: () =>
          jsonBodies(requests, "/v1/metrics").flatMap((body) =>
            body.resourceMetrics.flatMap((rm: any) =>
              rm.scopeMetrics.flatMap((sm: any) =>
                sm.metrics.filter((m: any) => m.sum !== undefined).flatMap((m: any) =>
                  m.sum.dataPoints.map((p: any) => ({
                    metric: m.name,
                    serviceName: attributesOf(rm.resource.attributes)["service.name"],
                    monotonic: m.sum.isMonotonic,
                    attributes: attributesOf(p.attributes),
                    value: p.asInt === undefined ? p.asDouble : Number(p.asInt)
                  }))
                )
              )
            )
          ),
        everything: () => requests.map((r) => r.body.toString("utf8")).join("\n")
      }
      resume(Effect.succeed({ receiver, close: () => server.close() }))
    })
  }),
  ({ close }) => Effect.sync(close)
).pipe(Effect.map(({ receiver }) => receiver))
