/**
 * RemoteRuntime without an image: the runtime API builds one (spec §14 `/build`). The scripted API
 * checks what arrives: the image named under its registry prefix, a multipart `/build` whose
 * `context.tar.gz` is the real build context (base64 of a gzipped tar: Dockerfile FROM the base,
 * the Node binary, the server payload), the 429 re-sent, the build followed to its image, which
 * `/start` then runs; a failed build fails the start with the API's error.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { gunzipSync } from "node:zlib"
import { extract } from "tar-stream"
import { RemoteRuntime } from "../../src/remote.ts"
import { echo, options, ready, refusedStart, startError, startFailure, withActionServer } from "./helpers.ts"
import { scriptedApi } from "./scriptedApi.ts"

const BASE = "effect-sandbox/base:for-remote-build"
const BUILT = "registry.example/team/runtime:built-by-api"
const build = { buildRetry: Schedule.spaced("10 millis"), buildStatus: Schedule.spaced("10 millis") }

/** The tar's entries: name → content (text for small files, byte length for the rest). */
const entries = (tar: Buffer) =>
  new Promise<Map<string, string | number>>((resolve, reject) => {
    const found = new Map<string, string | number>()
    const reader = extract()
    reader.on("entry", (header, stream, next) => {
      const chunks: Array<Buffer> = []
      stream.on("data", (chunk: unknown) => chunks.push(chunk as Buffer))
      stream.on("end", () => {
        const content = Buffer.concat(chunks)
        found.set(header.name, header.name === "Dockerfile" ? content.toString("utf8") : content.length)
        next()
      })
    })
    reader.on("finish", () => resolve(found))
    reader.on("error", reject)
    reader.end(tar)
  })

describe("RemoteRuntime image build", () => {
  it.live(
    "builds the runtime image through /build (429 once), polls /build_status, starts what it built",
    () =>
      Effect.gen(function*() {
        const api = yield* withActionServer((url, key) => ({
          "GET /sessions/s-build": [{ status: 404 }],
          "GET /registry_prefix": [{ status: 200, body: { registry_prefix: "registry.example/team/" } }],
          "GET /image_exists": [{ status: 200, body: { exists: false } }, { status: 200, body: { exists: true } }],
          "POST /build": [{ status: 429 }, { status: 200, body: { build_id: "b-1" } }],
          "GET /build_status": [{ status: 200, body: { status: "RUNNING" } }, {
            status: 200,
            body: { status: "SUCCESS", image: BUILT }
          }],
          "POST /start": [{ status: 200, body: { runtime_id: "rt-1", url, session_api_key: key } }],
          "GET /runtime/rt-1": [ready],
          "POST /stop": [{ status: 200 }]
        }))
        const { image: _, ...base } = options(api, { sessionId: "s-build", baseImage: BASE })
        const result = yield* echo.pipe(
          Effect.provide(RemoteRuntime.layer({ ...base, schedules: { ...base.schedules, ...build } }))
        )
        assert.strictEqual(result.content, "remote-42")
        const calls = api.calls().map((call) => call.replace(/\?.*/, ""))
        assert.deepStrictEqual(calls, [
          "GET /sessions/s-build",
          "GET /registry_prefix",
          "GET /image_exists",
          "POST /build",
          "POST /build",
          "GET /build_status",
          "GET /build_status",
          "GET /image_exists",
          "POST /start",
          "GET /runtime/rt-1",
          "POST /stop"
        ])
        const target = new URL(`http://x${api.requests[2]!.path}`).searchParams.get("image")!
        assert.match(target, /^registry\.example\/team\/runtime:[0-9a-f]{16}$/)
        assert.strictEqual(api.requests[6]!.path, "/build_status?build_id=b-1")
        assert.strictEqual(api.requests[7]!.path, `/image_exists?image=${encodeURIComponent(BUILT)}`)
        assert.strictEqual((api.requests[8]!.body as { image: string }).image, BUILT)

        const sent = api.requests[4]!
        const form = yield* Effect.promise(() =>
          new Response(sent.body as string, { headers: { "content-type": sent.headers["content-type"]! } }).formData()
        )
        assert.strictEqual(form.get("target_image"), target)
        const context = form.get("context") as File
        assert.strictEqual(context.name, "context.tar.gz")
        const tar = gunzipSync(Buffer.from(yield* Effect.promise(() => context.text()), "base64"))
        const files = yield* Effect.promise(() => entries(tar))
        assert.match(files.get("Dockerfile") as string, new RegExp(`^FROM ${BASE}\\n`))
        assert.isAbove(files.get("opt/bin/node") as number, 1_000_000)
        assert.isTrue(files.has("opt/payload/server.mjs"))
        assert.isTrue(files.has("opt/preflight.sh"))
      }),
    120_000
  )

  it.live(
    "a failed build fails the start with the API's error; an image the API has is not built again",
    () =>
      Effect.gen(function*() {
        const failing = yield* scriptedApi({
          "GET /sessions/s-fail": [{ status: 404 }],
          "GET /registry_prefix": [{ status: 200, body: { registry_prefix: "registry.example/team" } }],
          "GET /image_exists": [{ status: 200, body: { exists: false } }],
          "POST /build": [{ status: 200, body: { build_id: "b-2" } }],
          "GET /build_status": [{ status: 200, body: { status: "FAILURE", error: "step 3: preflight failed" } }]
        })
        const { image: _, ...noImage } = options(failing, { sessionId: "s-fail", baseImage: BASE })
        const message = yield* startError(
          RemoteRuntime.layer({ ...noImage, schedules: { ...noImage.schedules, ...build } })
        )
        assert.strictEqual(message, "step 3: preflight failed")
        assert.notInclude(failing.calls(), "POST /start")

        const cached = yield* scriptedApi({
          "GET /sessions/s-cached": [{ status: 404 }],
          "GET /registry_prefix": [{ status: 200, body: { registry_prefix: "registry.example/team" } }],
          "GET /image_exists": [{ status: 200, body: { exists: true } }],
          "POST /start": [{ status: 500, body: { detail: "no capacity" } }]
        })
        const { image: __, ...again } = options(cached, { sessionId: "s-cached", baseImage: BASE })
        const refused = yield* startFailure(RemoteRuntime.layer(again))
        assert.strictEqual(
          refused.message,
          `Remote could not start a runtime: The runtime API at ${cached.url} refused POST /start: HTTP 500 no capacity`
        )
        // A 500 is no answer worth waiting out: sent once.
        assert.deepStrictEqual(refusedStart(refused), { reason: "unknown", status: 500 })
        assert.deepStrictEqual(cached.calls().map((call) => call.replace(/\?.*/, "")), [
          "GET /sessions/s-cached",
          "GET /registry_prefix",
          "GET /image_exists",
          "POST /start"
        ])
      }),
    120_000
  )
})
