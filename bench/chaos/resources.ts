/**
 * Group 2, resource bounds: requests that would exhaust memory or freeze the
 * server. Each case runs on a fresh keyed server (a case that wedges one must not
 * spoil the next): it must answer an error within its bound, the server's peak
 * memory must stay bounded, and `/alive` must keep answering meanwhile.
 */
import { writeFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { join } from "node:path"
import { atMost, type GroupContext, type Row } from "./rows.ts"
import {
  aliveProbe,
  type ChaosServer,
  keyedJson,
  keyedRequest,
  keyedRun,
  type RawReply,
  startChaosServer
} from "./server.ts"
import { zipBomb } from "./zipBomb.ts"

/** How long a hostile request may take to be refused. */
const ANSWER_MS = 10_000
/** How much a server's peak resident memory may grow while refusing one. */
const RSS_GROWTH_MB = 256

/**
 * An error answer: a 4xx, or a 200 carrying an ErrorObservation (what OpenHands answers for a
 * failed action) or an editor observation whose content is the editor's `ERROR:` block (how
 * OpenHands' file editor reports its errors).
 */
const isError = (reply: RawReply) => {
  if (reply.status >= 400 && reply.status < 500) return true
  if (reply.status !== 200) return false
  try {
    const body = JSON.parse(reply.body)
    return body.observation === "error" || (body.observation === "edit" && String(body.content).startsWith("ERROR:\n"))
  } catch {
    return false
  }
}

/** POST a body streamed in 1 MiB pieces (the client must not hold 50 MB strings to attack). */
const streamedPost = (
  server: ChaosServer,
  path: string,
  headers: Record<string, string>,
  pieces: () => Iterable<Buffer>
): Promise<RawReply> =>
  keyedRequest(server, { method: "POST", path, headers, body: pieces(), timeoutMs: ANSWER_MS + 5_000 })

/** GET a download and count its bytes, stopping at `capBytes` or the bound (a streamed `/` never ends). */
const boundedDownload = (server: ChaosServer, path: string, capBytes: number): Promise<RawReply> =>
  new Promise((resolve) => {
    const start = performance.now()
    let bytes = 0
    const req = httpRequest({
      host: "127.0.0.1",
      port: server.port,
      path: `/download_files?path=${encodeURIComponent(path)}`,
      headers: { "X-Session-API-Key": server.key }
    }, (res) => {
      let body = ""
      res.on("data", (chunk: Buffer) => {
        bytes += chunk.length
        if (body.length < 4096) body += chunk.toString("latin1")
        if (bytes > capBytes) req.destroy()
      })
      res.on("close", () => resolve({ status: res.statusCode ?? 0, body, ms: performance.now() - start }))
    })
    const timer = setTimeout(() => req.destroy(), ANSWER_MS)
    req.on("close", () => clearTimeout(timer))
    req.on("error", () => resolve({ status: 0, body: "", ms: performance.now() - start }))
    req.end()
  })

interface Case {
  readonly name: string
  /** Prepare on the fresh server (e.g. make a FIFO), then attack; returns the answer. */
  readonly attack: (server: ChaosServer) => Promise<RawReply>
}

const readAction = (path: string) => ({ action: { action: "read", args: { path } } })
const viewAction = (path: string) => ({ action: { action: "edit", args: { path, command: "view" } } })

const CASES: ReadonlyArray<Case> = [
  {
    name: "view of /dev/zero",
    attack: (s) => keyedJson(s, "POST", "/execute_action", viewAction("/dev/zero"), ANSWER_MS)
  },
  {
    name: "read of /dev/zero",
    attack: (s) => keyedJson(s, "POST", "/execute_action", readAction("/dev/zero"), ANSWER_MS)
  },
  {
    name: "3 reads of a FIFO, then a command",
    attack: async (s) => {
      await keyedRun(s, `mkfifo ${s.workspace}/fifo`)
      const start = performance.now()
      const reads = await Promise.all(
        [0, 1, 2].map(() => keyedJson(s, "POST", "/execute_action", readAction(`${s.workspace}/fifo`), ANSWER_MS))
      )
      const next = await keyedRun(s, "echo next", ANSWER_MS)
      const ok = reads.every(isError) && next?.includes("next") === true
      return { status: ok ? 400 : 0, body: "", ms: performance.now() - start }
    }
  },
  {
    name: "zip bomb upload (1 MB -> 1 GiB)",
    attack: async (s) => {
      const bomb = await zipBomb("zeros.bin", 1 << 30)
      const form = Buffer.concat([
        Buffer.from(
          "--bomb\r\nContent-Disposition: form-data; name=\"file\"; filename=\"bomb.zip\"\r\n" +
            "Content-Type: application/zip\r\n\r\n"
        ),
        bomb,
        Buffer.from("\r\n--bomb--\r\n")
      ])
      return streamedPost(
        s,
        `/upload_file?destination=${encodeURIComponent(s.workspace)}`,
        { "content-type": "multipart/form-data; boundary=bomb", "content-length": String(form.length) },
        function*() {
          yield form
        }
      )
    }
  },
  {
    // A document is converted in the server: its parts may not expand without bound (editor/ooxml.ts).
    name: "view of a .docx zip bomb (1 MB -> 1 GiB)",
    attack: async (s) => {
      writeFileSync(join(s.workspace, "bomb.docx"), await zipBomb("word/document.xml", 1 << 30))
      return keyedJson(s, "POST", "/execute_action", viewAction(join(s.workspace, "bomb.docx")), ANSWER_MS)
    }
  },
  { name: "download of /", attack: (s) => boundedDownload(s, "/", 512 * 2 ** 20) },
  {
    name: "50 MB body of nested arrays",
    attack: (s) =>
      streamedPost(s, "/execute_action", {
        "content-type": "application/json",
        "content-length": String(50 * 2 ** 20)
      }, function*() {
        const open = Buffer.alloc(2 ** 20, "[")
        const close = Buffer.alloc(2 ** 20, "]")
        for (let i = 0; i < 25; i++) yield open
        for (let i = 0; i < 25; i++) yield close
      })
  }
]

export const resourceRows = async ({ budget }: GroupContext): Promise<ReadonlyArray<Row>> => {
  const rows: Array<Row> = []
  let worstRss = 0
  let worstAlive = 0
  for (const c of CASES) {
    if (budget.over) {
      rows.push({ name: `resources: ${c.name} refused`, value: 0, unit: "ms", target: "not run: budget", pass: false })
      continue
    }
    const server = await startChaosServer()
    try {
      const rssBefore = server.peakMb()
      const probe = aliveProbe(server.port)
      const reply = await c.attack(server).catch((): RawReply => ({ status: 0, body: "", ms: ANSWER_MS }))
      const { maxMs, failures } = await probe.stop()
      const refused = isError(reply) && reply.ms <= ANSWER_MS
      if (!refused) {
        console.log(`  ${c.name}: HTTP ${reply.status} after ${reply.ms.toFixed(0)} ms ${reply.body.slice(0, 200)}`)
      }
      rows.push({
        name: `resources: ${c.name} refused`,
        value: Math.round(reply.ms),
        unit: "ms",
        target: `error within ${ANSWER_MS}`,
        pass: refused
      })
      worstRss = Math.max(worstRss, server.peakMb() - rssBefore)
      worstAlive = Math.max(worstAlive, failures > 0 ? 15_000 : maxMs)
    } finally {
      await server.release()
    }
  }
  rows.push(atMost("resources: server peak RSS growth (worst case)", worstRss, "MB", RSS_GROWTH_MB))
  rows.push(atMost("resources: max /alive latency during attacks", worstAlive, "ms", 1000))
  return rows
}
