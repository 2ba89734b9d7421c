/**
 * envd's `/files` REST endpoints over the Docker engine (the user's ids and directories through the
 * sandbox's spawner): `POST /files` (multipart, one `file` part
 * per file named by its path, or `application/octet-stream` with `?path=`) creates the parent
 * directories as the user and writes each file owned by that user; `GET /files?path=` sends a
 * file's bytes. Answers `[{name, type, path}]` as envd does, and `{code, message}` errors.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { posix } from "node:path"
import { extract, pack } from "tar-stream"
import type { Spawner } from "../spawner.ts"
import { readBody } from "./connect.ts"
import { docker } from "./docker.ts"

const fail = (response: ServerResponse, code: number, message: string) => {
  response.writeHead(code, { "content-type": "application/json" })
  response.end(JSON.stringify({ code, message }))
}

/** The user's uid and gid in the container (`id`), to own what is written. */
const idsOf = async (spawner: Spawner, user: string) => {
  const { exitCode, output } = await spawner.run(["/bin/sh", "-c", "id -u; id -g"], user)
  if (exitCode !== 0) return undefined
  const [uid, gid] = output.trim().split("\n").map(Number)
  return { uid: uid!, gid: gid! }
}

/** The files of an upload: `[path, bytes]` from the multipart parts, or the raw body at `?path=`. */
const uploaded = async (request: IncomingMessage, url: URL): Promise<Array<readonly [string, Buffer]>> => {
  const body = await readBody(request)
  const type = request.headers["content-type"] ?? ""
  if (!type.startsWith("multipart/form-data")) return [[url.searchParams.get("path") ?? "", body]]
  const form = await new Response(new Uint8Array(body), { headers: { "content-type": type } }).formData()
  const single = url.searchParams.get("path")
  return Promise.all(
    form.getAll("file").map(async (part) => {
      const file = part as File
      return [single ?? file.name, Buffer.from(await file.arrayBuffer())] as const
    })
  )
}

export const writeFiles = async (
  { container, spawner }: { readonly container: string; readonly spawner: Spawner },
  user: string,
  request: IncomingMessage,
  url: URL,
  response: ServerResponse
) => {
  const files = await uploaded(request, url)
  if (files.some(([path]) => !path.startsWith("/"))) return fail(response, 400, "path must be absolute")
  const ids = await idsOf(spawner, user)
  if (ids === undefined) return fail(response, 400, `user '${user}' does not exist`)
  const dirs = [...new Set(files.map(([path]) => posix.dirname(path)))]
  const made = await spawner.run(["mkdir", "-p", ...dirs], user)
  if (made.exitCode !== 0) return fail(response, 400, made.output.trim())
  const tar = pack()
  for (const [path, bytes] of files) tar.entry({ name: path.slice(1), mode: 0o644, uid: ids.uid, gid: ids.gid }, bytes)
  tar.finalize()
  await docker.getContainer(container).putArchive(tar as unknown as NodeJS.ReadableStream, { path: "/" })
  response.writeHead(200, { "content-type": "application/json" })
  response.end(JSON.stringify(files.map(([path]) => ({ name: posix.basename(path), type: "file", path }))))
}

export const readFile = async (container: string, url: URL, response: ServerResponse) => {
  const path = url.searchParams.get("path") ?? ""
  const archive = await docker.getContainer(container).getArchive({ path }).catch(() => undefined)
  if (archive === undefined) return fail(response, 404, `path '${path}' does not exist`)
  const chunks: Array<Buffer> = []
  const untar = extract()
  untar.on("entry", (header, stream, next) => {
    stream.on("data", (chunk: unknown) => {
      if (header.type === "file") chunks.push(chunk as Buffer)
    })
    stream.on("end", () => next())
  })
  await new Promise((resolve, reject) => {
    untar.on("finish", () => resolve(undefined))
    untar.on("error", reject)
    archive.pipe(untar)
  })
  response.writeHead(200, { "content-type": "application/octet-stream" })
  response.end(Buffer.concat(chunks))
}
