/**
 * The file viewer server (spec §2.5) of a real action server process: its URL file, `/view` for a
 * PNG and a PDF (pdf.js served by the viewer itself), OpenHands' error pages and statuses, the
 * executor's file rules, and that it goes with the server.
 */
import { assert, it as vitestIt, layer } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, truncateSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { assertAlive, serverLayer, startTestServer, TestServer } from "./helpers.ts"
import { onePagePdf, solidPng } from "./viewerFixtures.ts"

const urlFile = join(tmpdir(), `file-viewer-url-${randomUUID()}`)

/** The viewer's URL, as the server wrote it. */
const viewerUrl = (file = urlFile) => {
  const url = readFileSync(file, "utf8")
  assert.match(url, /^http:\/\/localhost:\d+$/)
  return url
}

const get = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url)
    const bytes = new Uint8Array(await response.arrayBuffer())
    return {
      status: response.status,
      type: response.headers.get("content-type"),
      bytes,
      text: new TextDecoder().decode(bytes)
    }
  })

const view = (path: string) => get(`${viewerUrl()}/view?${new URLSearchParams({ path })}`)

const png = solidPng(4, [255, 0, 0])
const pdf = onePagePdf("Hello viewer")

layer(serverLayer({ env: { EFFECT_SANDBOX_FILE_VIEWER_URL_FILE: urlFile } }), { excludeTestServices: true })(
  "file viewer server",
  (it) => {
    it.effect("listens on 127.0.0.1, writes http://localhost:<port> to its URL file, and GET / says it runs", () =>
      Effect.gen(function*() {
        const reply = yield* get(viewerUrl())
        assert.strictEqual(reply.status, 200)
        assert.deepStrictEqual(JSON.parse(reply.text), { status: "File viewer server is running" })
        const port = new URL(viewerUrl()).port
        const listening = execFileSync("ss", ["-Hltn", `sport = :${port}`], { encoding: "utf8" })
        // One listening socket, and its local address is loopback (the columns: state, queues, local, peer).
        assert.deepStrictEqual(listening.trim().split("\n").map((line) => line.split(/\s+/)[3]), [`127.0.0.1:${port}`])
      }))

    it.effect("shows a PNG as a base64 <img> in a page titled File Viewer - <name>", () =>
      Effect.gen(function*() {
        const { workspace } = yield* TestServer
        writeFileSync(join(workspace, "dot.png"), png)
        const reply = yield* view(join(workspace, "dot.png"))
        assert.strictEqual(reply.status, 200, reply.text)
        assert.strictEqual(reply.type, "text/html; charset=utf-8")
        assert.include(reply.text, "<title>File Viewer - dot.png</title>")
        assert.include(reply.text, `img.src = "data:image/png;base64,${Buffer.from(png).toString("base64")}"`)
      }))

    it.effect("shows a PDF with pdf.js, which the viewer serves itself (no CDN)", () =>
      Effect.gen(function*() {
        const { workspace } = yield* TestServer
        writeFileSync(join(workspace, "doc.pdf"), pdf)
        const reply = yield* view(join(workspace, "doc.pdf"))
        assert.strictEqual(reply.status, 200, reply.text)
        assert.include(reply.text, "<title>File Viewer - doc.pdf</title>")
        assert.include(reply.text, `import * as pdfjsLib from "/pdfjs/pdf.min.mjs"`)
        assert.include(reply.text, `id="file-data">${Buffer.from(pdf).toString("base64")}</script>`)
        assert.notInclude(reply.text, "cdnjs")
        const build = join(dirname(createRequire(import.meta.url).resolve("pdfjs-dist/package.json")), "build")
        for (const name of ["pdf.min.mjs", "pdf.worker.min.mjs"]) {
          const script = yield* get(`${viewerUrl()}/pdfjs/${name}`)
          assert.strictEqual(script.status, 200)
          assert.strictEqual(script.type, "text/javascript; charset=utf-8")
          assert.deepStrictEqual(script.bytes, new Uint8Array(readFileSync(join(build, name))))
        }
      }))

    it.effect("answers OpenHands' error pages and statuses, and stays up", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const { workspace } = server
        mkdirSync(join(workspace, "pics"), { recursive: true })
        writeFileSync(join(workspace, "notes.txt"), "text")
        const cases: Array<[string, number, string]> = [
          ["dot.png", 400, "<h1>Error: Path must be absolute</h1><p>dot.png</p>"],
          [join(workspace, "nope.png"), 404, `<h1>Error: File not found</h1><p>${workspace}/nope.png</p>`],
          [join(workspace, "pics"), 400, `<h1>Error: Path is a directory</h1><p>${workspace}/pics</p>`],
          [
            join(workspace, "notes.txt"),
            500,
            `<h1>Error viewing file</h1><p>${workspace}/notes.txt</p><p>Unsupported file extension: .txt. ` +
            "Supported extensions are: .pdf, .png, .jpg, .jpeg, .gif</p>"
          ],
          ["/x/<b>.png", 404, "<h1>Error: File not found</h1><p>/x/&lt;b&gt;.png</p>"]
        ]
        for (const [path, status, body] of cases) {
          const reply = yield* view(path)
          assert.deepStrictEqual([reply.status, reply.text], [status, body], path)
        }
        const missing = yield* get(`${viewerUrl()}/view`)
        assert.deepStrictEqual(
          [missing.status, missing.text],
          [400, "<h1>Error: Missing the path parameter</h1><p>Use /view?path=&lt;absolute path&gt;</p>"]
        )
        yield* assertAlive(server)
      }))

    it.effect("opens files as file actions do: a FIFO is refused at once, a file over 16 MiB is 413", () =>
      Effect.gen(function*() {
        const { workspace } = yield* TestServer
        execFileSync("mkfifo", [join(workspace, "pipe.png")])
        const fifo = yield* view(join(workspace, "pipe.png"))
        assert.strictEqual(fifo.status, 403)
        assert.include(fifo.text, "it is a FIFO (named pipe). File actions only work on regular files and directories.")
        writeFileSync(join(workspace, "huge.pdf"), "")
        truncateSync(join(workspace, "huge.pdf"), 16 * 1024 * 1024 + 1)
        const huge = yield* view(join(workspace, "huge.pdf"))
        assert.strictEqual(huge.status, 413)
        assert.include(
          huge.text,
          "is too large to view (16777217 bytes; the viewer shows files of at most 16777216 bytes)"
        )
      }))
  }
)

vitestIt.live("the viewer stops with its server, and removes its URL file", () =>
  Effect.gen(function*() {
    const file = join(tmpdir(), `file-viewer-url-${randomUUID()}`)
    const url = yield* Effect.scoped(Effect.gen(function*() {
      yield* startTestServer({ env: { EFFECT_SANDBOX_FILE_VIEWER_URL_FILE: file } })
      const running = viewerUrl(file)
      assert.strictEqual((yield* get(running)).status, 200)
      return running
    }))
    assert.isFalse(existsSync(file), "the URL file is removed")
    const refused = yield* Effect.promise(() => fetch(url).then(() => "answered", (e) => String(e.cause?.code)))
    assert.strictEqual(refused, "ECONNREFUSED")
  }))
