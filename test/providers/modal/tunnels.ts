/**
 * Modal's encrypted tunnels, here: a TLS listener on 127.0.0.1 per sandbox port, passing bytes to
 * that port of the sandbox's container. The SDK makes a tunnel's URL `https://<host>:<port>`, so
 * the listener speaks TLS with a certificate made per stand-in (openssl, as the Kubernetes stand-in's), which `trustCertificate`
 * adds to this test process's default CAs only (what the runtime's HTTP client and `fetch` use).
 * Each tunnel reports its open connections, which the idle timeout counts as activity, as Modal does.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { connect, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createServer, getCACertificates, type Server, setDefaultCACertificates } from "node:tls"
import { selfSignedCertificate } from "../../kubernetes/standin/tls.ts"
import type { SeenRequest } from "../aliveAttempts.ts"

/** A self-signed certificate for 127.0.0.1 (a day long), and its key: the Kubernetes stand-in's kind. */
export interface Certificate {
  readonly cert: string
  readonly key: string
}

export const makeCertificate = (): Certificate => {
  const dir = mkdtempSync(join(tmpdir(), "modal-standin-tls-"))
  try {
    const made = selfSignedCertificate(dir)
    return { cert: made.cert.toString("utf8"), key: made.key.toString("utf8") }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Trust `certificate` in this process (on top of the default CAs), as a client of a real tunnel trusts Modal's. */
export const trustCertificate = (certificate: Certificate) =>
  setDefaultCACertificates([...getCACertificates("default"), certificate.cert])

/** One port's tunnel. */
export interface Tunnel {
  readonly containerPort: number
  readonly port: number
  /** Connections open now. */
  readonly open: () => number
  /** The HTTP/1.1 requests sent through it so far (read off the request lines), with when. */
  readonly requested: ReadonlyArray<SeenRequest>
  readonly close: () => Promise<void>
}

/** An HTTP/1.1 request line (its path), at the start of a line of what a client sends. */
const REQUEST_LINE = /^[A-Z]+ (\S+) HTTP\/1\.1\r$/gm

/** A tunnel to `ip:containerPort`, calling `touched` on every connection and byte (activity). */
export const openTunnel = async (
  certificate: Certificate,
  ip: string,
  containerPort: number,
  touched: () => void
): Promise<Tunnel> => {
  const sockets = new Set<Socket>()
  const requested: Array<SeenRequest> = []
  const server: Server = createServer({ cert: certificate.cert, key: certificate.key }, (client) => {
    touched()
    // Without TCP_NODELAY a response's second small TLS write waits for the client's delayed ACK
    // (~40 ms on Linux) on every fresh connection: the stand-in's cost, not Modal's (proxies such
    // as Envoy set TCP_NODELAY on their connections).
    client.setNoDelay(true)
    const upstream = connect(containerPort, ip)
    sockets.add(client).add(upstream)
    const done = () => {
      client.destroy()
      upstream.destroy()
      sockets.delete(client)
      sockets.delete(upstream)
      touched()
    }
    const read = (chunk: Buffer) => {
      touched()
      const at = Date.now()
      for (const line of chunk.toString("latin1").matchAll(REQUEST_LINE)) requested.push({ path: line[1]!, at })
    }
    client.on("data", read).on("error", done).on("close", done)
    upstream.on("error", done).on("close", done)
    client.pipe(upstream).pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  return {
    containerPort,
    port,
    open: () => sockets.size / 2,
    requested,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    }
  }
}
