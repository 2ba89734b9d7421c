/**
 * The file viewer (src/server/fileViewer) answers without a key, so what docs/security.md says of
 * it must hold: it is reachable on loopback only (inside a container: from inside the sandbox only),
 * and it opens files as file actions do, so a device or FIFO named like a PDF neither hangs a
 * request nor streams endless bytes, and the server stays up.
 */
import { execFileSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import { readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { atMost, type Row } from "./rows.ts"
import { accepts, httpBytes, outerAddresses, rawRequest, startChaosServer } from "./server.ts"

/**
 * The status of `/view?path=<path>` (0: no answer within 5 s). With fetch: a request that half-closes
 * its socket, as `rawRequest` does, is dropped by the server before a slower answer is sent.
 */
const viewStatus = (port: number, path: string) =>
  fetch(`http://127.0.0.1:${port}/view?path=${encodeURIComponent(path)}`, { signal: AbortSignal.timeout(5_000) })
    .then(async (response) => {
      await response.arrayBuffer()
      return response.status
    }, () => 0)

export const fileViewerRows = async (): Promise<ReadonlyArray<Row>> => {
  const urlFile = join(tmpdir(), `chaos-viewer-url-${randomUUID()}`)
  const server = await startChaosServer({ env: { EFFECT_SANDBOX_FILE_VIEWER_URL_FILE: urlFile } })
  try {
    const port = Number(new URL(readFileSync(urlFile, "utf8")).port)
    const addresses = outerAddresses()
    const reached = (await Promise.all(addresses.map((address) =>
      accepts(address, port, 2_000)
    ))).filter(Boolean).length
    console.log(`  viewer on port ${port}: ${reached} of ${addresses.length} non-loopback addresses accepted`)

    // Named like files it shows; each must be refused (403) at once, not read.
    const fifo = join(server.workspace, "pipe.pdf")
    execFileSync("mkfifo", [fifo])
    const specials = ["/dev/zero", "/dev/urandom", "/dev/stdin", fifo, "/proc/self/fd/0"]
    const statuses = await Promise.all(specials.map((path) => viewStatus(port, path)))
    const served = statuses.filter((status) => status !== 403).length
    console.log(`  /view of ${specials.join(", ")}: ${statuses.join(", ")}`)
    const alive = (await rawRequest(server.port, httpBytes("GET", "/alive", {}))).status === 200
    return [
      atMost(
        `viewer: connections accepted from non-loopback addresses (of ${addresses.length})`,
        reached,
        "accepted",
        0
      ),
      atMost(
        `viewer: devices and FIFOs served or hung instead of refused (of ${specials.length}), server ${
          alive ? "up" : "DOWN"
        }`,
        served + Number(!alive),
        "requests",
        0
      )
    ]
  } finally {
    await server.release()
    rmSync(urlFile, { force: true })
  }
}
