/**
 * OpenHands' file viewer server (spec §2.5): a second HTTP server beside the action server, on
 * 127.0.0.1 only and without authentication, whose `GET /view?path=<abs>` renders a PDF or an
 * image into a page an agent's browser opens (`goto("<url>/view?path=/workspace/x.pdf")`). Its
 * URL is written to `/tmp/oh-server-url`, where agents read it.
 *
 * Differences from OpenHands, on purpose: the port is the OS's choice (OpenHands probes ten random
 * ports above the server's, a probe-then-bind race); files are read through the executor
 * (`viewFile`: its workspace rules, no special files, a size bound); pdf.js comes from this server,
 * not from a CDN; the URL file is removed when the server stops, if it still names this server.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Layer, Option } from "effect"
import { HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import { readFileSync, writeFileSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { basename, dirname, isAbsolute, join } from "node:path"
import { removeInFinalizer } from "../../executor/cleanup.ts"
import type { FileViewError } from "../../executor/files/viewFile.ts"
import { ActionExecutor } from "../../services/ActionExecutor.ts"
import { closingServer } from "../closingServer.ts"
import { isLoopback } from "../exposure.ts"
import { searchParams } from "../responses.ts"
import { errorPage, extensionOf, isSupported, PDFJS_PATH, unsupportedMessage, viewerPage } from "./page.ts"

/** Where OpenHands writes the viewer's URL (agents and its browser tests read it there). */
export const URL_FILE = "/tmp/oh-server-url"

const html = (body: string, status = 200) =>
  HttpServerResponse.text(body, { status, contentType: "text/html; charset=utf-8" })

/** The status each refusal is answered with (OpenHands: 404 missing, 400 directory). */
const STATUS: Readonly<Record<FileViewError["reason"], number>> = {
  NotFound: 404,
  IsDirectory: 400,
  Refused: 403,
  TooLarge: 413
}

/** OpenHands' heading for each refusal (it has none for the refusals it does not make). */
const HEADING: Readonly<Record<FileViewError["reason"], string>> = {
  NotFound: "Error: File not found",
  IsDirectory: "Error: Path is a directory",
  Refused: "Error viewing file",
  TooLarge: "Error viewing file"
}

/** pdf.js's files this server serves, read from the `pdfjs-dist` package once, when first asked for. */
const PDFJS_FILES = ["pdf.min.mjs", "pdf.worker.min.mjs"] as const
const pdfjsCache = new Map<string, Uint8Array>()
const pdfjsFile = (name: string) =>
  Effect.try({
    try: () => {
      const cached = pdfjsCache.get(name)
      if (cached !== undefined) return cached
      const build = join(dirname(createRequire(import.meta.url).resolve("pdfjs-dist/package.json")), "build")
      const bytes = readFileSync(join(build, name))
      pdfjsCache.set(name, bytes)
      return bytes
    },
    catch: (cause) => `pdf.js (the pdfjs-dist package) cannot be read: ${(cause as Error).message}`
  })

const view = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const client = Option.getOrUndefined(request.remoteAddress)
  if (client === undefined || !isLoopback(client)) {
    return html(errorPage("Access Denied", "This endpoint is only accessible from localhost"), 403)
  }
  const path = (yield* searchParams).get("path")
  if (path === null) return html(errorPage("Error: Missing the path parameter", "Use /view?path=<absolute path>"), 400)
  if (!isAbsolute(path)) return html(errorPage("Error: Path must be absolute", path), 400)
  const executor = yield* ActionExecutor
  return yield* executor.viewFile(path).pipe(
    Effect.map((bytes) => {
      const extension = extensionOf(path)
      return isSupported(extension)
        ? html(viewerPage(basename(path), extension, bytes))
        : html(errorPage("Error viewing file", path, unsupportedMessage(extension)), 500)
    }),
    Effect.catch((e) =>
      Effect.succeed(
        html(
          e.reason === "NotFound" || e.reason === "IsDirectory" ? errorPage(HEADING[e.reason], path) : errorPage(
            HEADING[e.reason],
            path,
            e.message
          ),
          STATUS[e.reason]
        )
      )
    )
  )
})

const routes = HttpRouter.use(Effect.fn(function*(router) {
  yield* router.add("GET", "/", HttpServerResponse.jsonUnsafe({ status: "File viewer server is running" }))
  yield* router.add("GET", "/view", view)
  for (const name of PDFJS_FILES) {
    yield* router.add(
      "GET",
      `${PDFJS_PATH}/${name}`,
      pdfjsFile(name).pipe(
        Effect.map((bytes) => HttpServerResponse.uint8Array(bytes, { contentType: "text/javascript; charset=utf-8" })),
        Effect.catch((message) => Effect.succeed(HttpServerResponse.text(message, { status: 500 })))
      )
    )
  }
}))

/** Removes the URL file if it still names `url` (one a newer viewer wrote is left alone; one already gone is fine). */
const withdrawUrl = (urlFile: string, url: string) =>
  Effect.tryPromise(() => readFile(urlFile, "utf8")).pipe(
    Effect.flatMap((content) => content === url ? removeInFinalizer(urlFile) : Effect.void),
    Effect.ignore
  )

/**
 * Writes the URL for the server's lifetime (a file that cannot be written is logged: the viewer
 * still serves); removes the file at the end if it still names this server.
 */
const announceUrl = (urlFile: string) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    if (server.address._tag === "UnixPathAddress") return
    const url = `http://localhost:${server.address.port}`
    yield* Effect.acquireRelease(
      Effect.try(() => writeFileSync(urlFile, url)).pipe(
        Effect.catch((e) => Effect.logWarning(`cannot write the file viewer's URL to ${urlFile}: ${e.cause}`))
      ),
      () => withdrawUrl(urlFile, url)
    )
  }))

/** The viewer on 127.0.0.1 (an OS-chosen port) for the layer's lifetime, its URL written to `urlFile`. */
export const layer = (urlFile: string) =>
  Layer.merge(HttpRouter.serve(routes, { disableListenLog: true, disableLogger: true }), announceUrl(urlFile)).pipe(
    Layer.provide(NodeHttpServer.layer(closingServer, { port: 0, host: "127.0.0.1", disablePreemptiveShutdown: true }))
  )
