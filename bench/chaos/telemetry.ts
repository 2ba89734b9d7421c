/**
 * Part of group 7, secrets: the action server exporting its spans and metrics over OTLP
 * (src/telemetry/otlp.ts) to a collector, here a local receiver keeping every payload. Actions
 * print a `Redacted` variable, fail, write and read it; no payload may hold the secret, the
 * session key or the collector's token (sent as an OTLP header), and no process but the server
 * itself may hold that token in its environment.
 */
import { randomBytes } from "node:crypto"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { atLeast, atMost, type GroupContext, type Row, waitFor } from "./rows.ts"
import { keyedJson, keyedRun, startChaosServer } from "./server.ts"

/** A local OTLP/HTTP receiver: every request body, until `close`. */
const startReceiver = async () => {
  const bodies: Array<Buffer> = []
  const receiver = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk)).on("end", () => {
      bodies.push(Buffer.concat(chunks))
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  const { port } = receiver.address() as AddressInfo
  return { endpoint: `http://127.0.0.1:${port}`, bodies, close: () => receiver.close() }
}

export const telemetryRows = async ({ budget, quick }: GroupContext): Promise<ReadonlyArray<Row>> => {
  const secret = randomBytes(16).toString("hex")
  const token = randomBytes(16).toString("hex")
  const receiver = await startReceiver()
  const server = await startChaosServer({
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_HEADERS: `x-collector-token=${token}`,
      OTEL_BSP_SCHEDULE_DELAY: "100",
      OTEL_METRIC_EXPORT_INTERVAL: "200"
    }
  })
  let holders: number = Number.POSITIVE_INFINITY
  let actions = 0
  try {
    await keyedJson(server, "POST", "/v1/env", { vars: { CHAOS_SECRET: secret }, secrets: ["CHAOS_SECRET"] })
    const commands = [
      "echo $CHAOS_SECRET",
      "printf %s \"$CHAOS_SECRET\" >&2; exit 7",
      "echo \"$CHAOS_SECRET\" > secret.txt; cat secret.txt",
      "env | grep -i otel; cat /proc/self/environ | tr '\\0' '\\n' | grep -c CHAOS_SECRET"
    ]
    for (let n = 0; n < (quick ? 8 : 40) && !budget.over; n++, actions++) {
      await keyedRun(server, commands[n % commands.length]!)
    }
    // Every process but the server (whose own configuration the token is) must lack it.
    const count = await keyedRun(
      server,
      `for p in /proc/[0-9]*; do [ "\${p#/proc/}" = ${server.pid} ] && continue; ` +
        `grep -q -a -F -e '${token}' "$p/environ" 2>/dev/null && echo "$p"; done | wc -l`
    )
    if (count !== null && /^\s*\d+\s*$/.test(count)) holders = Number(count.trim())
    await waitFor(() => receiver.bodies.length >= 2, 5_000)
  } finally {
    await server.release()
    receiver.close()
  }
  const leaking =
    receiver.bodies.filter((body) => [secret, server.key, token].some((value) => body.includes(Buffer.from(value))))
      .length
  return [
    atLeast(
      `secrets: telemetry payloads the server exported (OTLP, ${actions} actions)`,
      receiver.bodies.length,
      "payloads",
      1
    ),
    atMost(
      "secrets: telemetry payloads holding a secret, the session key or the collector's token",
      leaking,
      "payloads",
      0
    ),
    // A probe that could not run counts as a failure, never as a pass.
    atMost(
      "secrets: processes besides the server holding the collector's token in their environment",
      holders,
      "processes",
      0
    )
  ]
}
