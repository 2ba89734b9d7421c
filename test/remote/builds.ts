/**
 * `/build` as OpenHands' remote builder calls it (spec §14): a multipart body whose `context` is
 * base64 of a gzip tar, then `/build_status` polled to the end. Shared by the runtime API tests
 * and the chaos rows of `/build`.
 */
import { randomBytes } from "node:crypto"
import { request } from "node:http"
import { gzipSync } from "node:zlib"
import { pack } from "tar-stream"
import { type Answer, call } from "../../scripts/runtimeApiProcess.ts"

/** The multipart body OpenHands' remote builder sends. */
export const buildForm = (context: string, target: string, tags: ReadonlyArray<string>) => {
  const body = new FormData()
  body.append("context", new Blob([context]), "context.tar.gz")
  body.append("target_image", target)
  for (const tag of tags) body.append("tags", tag)
  return body
}

/** A gzip tar holding one Dockerfile, base64-encoded. */
export const dockerfileContext = async (dockerfile: string) => {
  const tar = pack()
  tar.entry({ name: "Dockerfile" }, dockerfile)
  tar.finalize()
  const chunks: Array<Buffer> = []
  for await (const chunk of tar) chunks.push(chunk as Buffer)
  return gzipSync(Buffer.concat(chunks)).toString("base64")
}

/** `POST /build` of a one-Dockerfile context; the answer (`{build_id}` when accepted). */
export const postBuild = async (
  base: string,
  key: string,
  target: string,
  tags: ReadonlyArray<string>,
  dockerfile: string
): Promise<Answer> => {
  const response = await fetch(`${base}/build`, {
    method: "POST",
    headers: { "X-API-Key": key },
    body: buildForm(await dockerfileContext(dockerfile), target, tags)
  })
  return { status: response.status, body: await response.json() as Record<string, unknown> }
}

/** `/build_status` every 500 ms until the build leaves RUNNING (at most `ms`); its last answer. */
export const waitBuild = async (base: string, key: string, buildId: string, ms = 60_000) => {
  for (const until = Date.now() + ms; Date.now() < until;) {
    const { body } = await call(base, "GET", `/build_status?build_id=${buildId}`, { key })
    if (body["status"] !== "RUNNING") return body
    await new Promise((done) => setTimeout(done, 500))
  }
  throw new Error(`build ${buildId} did not finish within ${ms} ms`)
}

/** `POST /build`, then `/build_status` until it leaves RUNNING; its last answer. */
export const buildAndWait = async (
  base: string,
  key: string,
  target: string,
  tags: ReadonlyArray<string>,
  dockerfile: string
) => {
  const answer = await postBuild(base, key, target, tags, dockerfile)
  if (answer.status !== 200) throw new Error(`POST /build answered ${answer.status}: ${JSON.stringify(answer.body)}`)
  return waitBuild(base, key, answer.body["build_id"] as string)
}

/** `bytes` random bytes after gzip's magic number, base64-encoded: a context as far as its first bytes tell. */
export const gzipLike = (bytes: number) =>
  Buffer.concat([Buffer.from([0x1f, 0x8b]), randomBytes(bytes)]).toString("base64")

/**
 * `POST /build` of `form`, chunked (no Content-Length) or not; the answer, also when the server
 * answers before the body is sent and closes (as httpcore, OpenHands' HTTP client, reads it).
 */
export const rawBuild = async (base: string, key: string, form: FormData, chunked: boolean) => {
  const encoded = new Response(form)
  const body = Buffer.from(await encoded.arrayBuffer())
  return new Promise<{ status: number; body: unknown }>((resolve, reject) => {
    const { hostname, port } = new URL(base)
    const outgoing = request({
      hostname,
      port,
      path: "/build",
      method: "POST",
      headers: {
        "X-API-Key": key,
        "Content-Type": encoded.headers.get("content-type")!,
        ...(chunked ? { "Transfer-Encoding": "chunked" } : { "Content-Length": String(body.length) })
      }
    }, (response) => {
      let text = ""
      response.on("data", (chunk: Buffer) => text += chunk.toString("utf8"))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }))
    })
    // The server may answer (and close) before the whole body is sent.
    outgoing.on("error", (error) => (error as NodeJS.ErrnoException).code === "EPIPE" ? undefined : reject(error))
    for (let offset = 0; offset < body.length; offset += 1024 * 1024) {
      outgoing.write(body.subarray(offset, offset + 1024 * 1024))
    }
    outgoing.end()
  })
}
