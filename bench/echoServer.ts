/**
 * The bare HTTP server of the loopback baselines: it answers a small JSON POST with a small JSON
 * body, as an action server answers `echo hi`. Run as a program (`node bench/echoServer.ts`) it
 * listens on 127.0.0.1 and prints its port, for the baseline whose server is another process.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"

/** A listening echo server on 127.0.0.1 and its port. */
export const echoServer = async (): Promise<{ readonly server: Server; readonly port: number }> => {
  const server = createServer((req, res) => {
    let body = ""
    req.setEncoding("utf8").on("data", (d: string) => (body += d)).on("end", () => {
      res.setHeader("content-type", "application/json")
      res.end(JSON.stringify({ observation: "run", content: JSON.parse(body).action.args.command }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { server, port: (server.address() as AddressInfo).port }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { port } = await echoServer()
  process.stdout.write(`${port}\n`)
  // Ends with its parent's end of stdin.
  process.stdin.resume().on("end", () => process.exit(0))
}
