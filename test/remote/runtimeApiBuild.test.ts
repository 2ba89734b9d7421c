/**
 * `/build` attacked with nothing but an API key (issue 20, item 4): tags outside the registry
 * prefix or held by images it did not make are refused and the images keep their ids; a build
 * that never ends is stopped at the time limit, leaves no container, and does not hold up another;
 * a build step reaches neither a host service nor a neighbour container; an upload above the cap
 * is a 413 and costs the server no memory afterwards. And DockerRuntime's image builder does not
 * reuse a runtime tag that was moved to another image.
 */
import { afterEach, assert, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { gzipSync } from "node:zlib"
import { pack } from "tar-stream"
import { DockerEngine } from "../../src/engines/docker/engine.ts"
import { ImageBuilder } from "../../src/engines/docker/imageBuilder.ts"
import { CONTEXT_LABEL } from "../../src/runtimeImage/imageContext.ts"
import { dockerCli } from "../docker/helpers.ts"
import { baseImage, describeDocker, toolsImage } from "../docker/infra.ts"
import { type ApiServer, apiServers, call, PREFIX } from "./apiServer.ts"
import { buildForm, gzipLike, postBuild, rawBuild, waitBuild } from "./builds.ts"

const KEY = randomBytes(16).toString("hex")
const servers = apiServers(KEY)
const apiServer = servers.start

/** An image's id, or "" when the engine has no such image. */
const imageId = (image: string) => dockerCli("image", "inspect", "--format", "{{.Id}}", image).stdout.trim()

/** Containers (running or not) whose command line holds `marker`: a build's step containers. */
const containersRunning = (marker: string) =>
  dockerCli("ps", "-a", "--no-trunc", "--format", "{{.ID}} {{.Command}}").stdout.split("\n").filter((line) =>
    line.includes(marker)
  )

/** The server process's resident memory, in MiB. */
const rssMiB = (server: ApiServer) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${server.process.pid}/status`, "utf8"))![1]) / 1024

/**
 * The build contexts `server` holds in the temp dir (named after its pid): other files' servers
 * build beside this one, so their contexts come and go meanwhile.
 */
const contextDirs = (server: ApiServer) =>
  readdirSync(tmpdir()).filter((name) => name.startsWith(`effect-sandbox-build-context-${server.process.pid}-`))

/** A one-shot TCP listener on every address of this host, counting the connections it gets. */
const hostService = async () => {
  let connections = 0
  const server = createServer((_, response) => response.end("host secret\n"))
  server.on("connection", () => connections++)
  await new Promise<void>((listening) => server.listen(0, "0.0.0.0", listening))
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () => new Promise<void>((closed) => server.close(() => closed()))
  }
}

/** A step that prints REACHED when `host:port` answers, else BLOCKED, and fails either way. */
const probeStep = (host: string, port: number) =>
  `RUN bash -c '(exec 3<>/dev/tcp/${host}/${port} && echo REACHED) 2>/dev/null || echo BLOCKED; exit 7'`

describeDocker("runtime API /build confinement (Docker)", () => {
  afterEach(async () => {
    await servers.stopAll()
  })

  it("refuses tags outside the prefix or not made by /build (403, 409), the images untouched", async () => {
    const { base } = await apiServer()
    const mark = randomBytes(4).toString("hex")
    // A runtime tag as DockerRuntime names them, and the project's own base image, inside the
    // default prefix `effect-sandbox` but not made by /build.
    const runtimeTag = `effect-sandbox-runtime:hostile${mark}`
    dockerCli("tag", baseImage(), runtimeTag)
    const inPrefix = `effect-sandbox/rapi-build:t${mark}`
    try {
      const hostile = [
        ["debian:bookworm", 403],
        ["docker.io/library/debian:bookworm", 403],
        ["postgres:16", 403],
        [runtimeTag, 403],
        [`localhost/elsewhere/runtime:t${mark}`, 403],
        [baseImage(), 409]
      ] as const
      for (const [tag, status] of hostile) {
        const before = imageId(tag)
        // The hostile tag as the target, and as an extra tag beside a harmless target.
        for (const [target, tags] of [[tag, []], [inPrefix, [tag]]] as const) {
          const answer = await postBuild(base, KEY, target, tags, `FROM ${baseImage()}\nRUN echo poisoned > /p\n`)
          assert.deepStrictEqual(answer, {
            status,
            body: {
              detail: status === 403
                ? `Refusing to tag ${tag}: /build tags images only under this server's registry prefix effect-sandbox`
                : `Refusing to tag ${tag}: the engine already has this tag and this server's /build did not make it`
            }
          }, tag)
        }
        assert.strictEqual(imageId(tag), before, `${tag} changed`)
        assert.strictEqual(imageId(inPrefix), "", "nothing is built for a refused request")
      }
      // A tag /build made may be built again: the earlier image goes with its tag.
      const first = await waitBuild(
        base,
        KEY,
        (await postBuild(base, KEY, inPrefix, [], `FROM ${baseImage()}\nRUN echo 1 > /v\n`)).body["build_id"] as string
      )
      assert.deepStrictEqual(first, { status: "SUCCESS", image: inPrefix })
      const firstId = imageId(inPrefix)
      const again = await waitBuild(
        base,
        KEY,
        (await postBuild(base, KEY, inPrefix, [], `FROM ${baseImage()}\nRUN echo 2 > /v\n`)).body["build_id"] as string
      )
      assert.deepStrictEqual(again, { status: "SUCCESS", image: inPrefix })
      assert.notStrictEqual(imageId(inPrefix), firstId)
      assert.strictEqual(imageId(firstId), "", "the image the tag left is removed")
      assert.strictEqual(dockerCli("run", "--rm", inPrefix, "cat", "/v").stdout, "2\n")
    } finally {
      dockerCli("rmi", runtimeTag, inPrefix)
    }
  }, 120_000)

  it("stops a build that never ends at the time limit, with nothing left, while another completes", async () => {
    const { base } = await apiServer(["--build-timeout", "6", "--build-concurrency", "2"])
    const mark = randomBytes(4).toString("hex")
    const tag = `effect-sandbox/rapi-build:t${mark}`
    try {
      const hung = await postBuild(base, KEY, `${tag}-hung`, [], `FROM ${baseImage()}\nRUN sleep infinity # ${mark}\n`)
      assert.strictEqual(hung.status, 200)
      // Its step is running before the next build is asked for.
      for (let i = 0; i < 100 && containersRunning(mark).length === 0; i++) await new Promise((r) => setTimeout(r, 100))
      assert.lengthOf(containersRunning(mark), 1)
      const quick = await postBuild(base, KEY, tag, [], `FROM ${baseImage()}\nRUN echo quick > /q\n`)
      const done = await waitBuild(base, KEY, quick.body["build_id"] as string)
      assert.deepStrictEqual(done, { status: "SUCCESS", image: tag })
      assert.strictEqual(
        (await call(base, "GET", `/build_status?build_id=${hung.body["build_id"]}`, { key: KEY })).body["status"],
        "RUNNING"
      )
      const stopped = await waitBuild(base, KEY, hung.body["build_id"] as string)
      assert.deepStrictEqual(stopped, {
        status: "TIMEOUT",
        error: "The build ran longer than this server's limit of 6 s and was stopped"
      })
      assert.deepStrictEqual(containersRunning(mark), [], "the hung step's container is gone")
      assert.strictEqual(imageId(`${tag}-hung`), "")
    } finally {
      dockerCli("rmi", tag)
    }
  }, 120_000)

  it("a build reaches neither a host service nor a neighbour container, by a step or by ADD <url>", async () => {
    const service = await hostService()
    const neighbour = `${PREFIX}-neighbour-${randomBytes(3).toString("hex")}`
    dockerCli("run", "-d", "--name", neighbour, toolsImage(), "python3", "-m", "http.server", "8000")
    try {
      // The host as a container on the default bridge reaches it: the bridge's gateway.
      const gateway = dockerCli("inspect", "--format", "{{.NetworkSettings.Gateway}}", neighbour).stdout.trim()
      const neighbourIp = dockerCli("inspect", "--format", "{{.NetworkSettings.IPAddress}}", neighbour).stdout.trim()
      /** A build of one probe step through `server`; what its step printed last. */
      const probe = async (server: ApiServer, host: string, port: number) => {
        const answer = await postBuild(
          server.base,
          KEY,
          "effect-sandbox/rapi-build:probe",
          [],
          `FROM ${baseImage()}\n${probeStep(host, port)}\n`
        )
        const state = await waitBuild(server.base, KEY, answer.body["build_id"] as string)
        assert.strictEqual(state["status"], "FAILURE")
        return /\n(REACHED|BLOCKED)\n/.exec(state["error"] as string)?.[1]
      }
      // On the engine's default bridge the probe reaches both: without that, the test proves nothing.
      const open = await apiServer(["--build-network", "bridge"])
      assert.strictEqual(await probe(open, gateway, service.port), "REACHED")
      assert.strictEqual(await probe(open, neighbourIp, 8000), "REACHED")
      const seen = service.connections()
      assert.isAbove(seen, 0)
      const confined = await apiServer()
      assert.strictEqual(await probe(confined, gateway, service.port), "BLOCKED")
      assert.strictEqual(await probe(confined, neighbourIp, 8000), "BLOCKED")
      assert.strictEqual(service.connections(), seen)

      // ADD <url> is fetched by the engine itself, from the host's loopback: refused, in the
      // Dockerfile and in a base image's ONBUILD trigger.
      const url = `http://127.0.0.1:${service.port}/secret`
      const onbuild = `effect-sandbox/rapi-onbuild:t${randomBytes(4).toString("hex")}`
      const made = spawnSync("docker", ["build", "-q", "-t", onbuild, "-"], {
        input: `FROM ${baseImage()}\nONBUILD ADD ${url} /s\n`,
        encoding: "utf8"
      })
      assert.strictEqual(made.status, 0, made.stderr)
      try {
        const fetched = async (dockerfile: string) =>
          waitBuild(
            confined.base,
            KEY,
            (await postBuild(confined.base, KEY, "effect-sandbox/rapi-build:add", [], dockerfile))
              .body["build_id"] as string
          )
        const refusal =
          `ADD ${url}: the engine would fetch it itself, from the host's network; download it in a RUN step (or COPY it from the context)`
        assert.deepStrictEqual(await fetched(`FROM ${baseImage()}\nADD ${url} /s\nRUN cat /s\n`), {
          status: "FAILURE",
          error: refusal
        })
        assert.deepStrictEqual(await fetched(`FROM ${onbuild}\nRUN cat /s\n`), {
          status: "FAILURE",
          error: `${onbuild} has ONBUILD ${refusal}`
        })
        // A registry on the host's loopback: the engine would pull from it, from the host.
        const registry = `127.0.0.1:${service.port}/x:1`
        assert.deepStrictEqual(await fetched(`FROM ${registry}\n`), {
          status: "FAILURE",
          error:
            `${registry}: the engine would pull it from 127.0.0.1:${service.port}, on the host's network; pull it onto the engine first`
        })
        assert.strictEqual(service.connections(), seen)
      } finally {
        dockerCli("rmi", onbuild)
      }
    } finally {
      dockerCli("rm", "-f", neighbour)
      await service.close()
    }
  }, 120_000)

  it(
    "refuses an upload above the cap with 413, keeps no memory after a large one, and stops a context that unpacks too far",
    async () => {
      const server = await apiServer(["--build-max-upload-mb", "256"])
      const fresh = rssMiB(server)
      const tag = `effect-sandbox/rapi-build:t${randomBytes(4).toString("hex")}`
      const tooLarge = {
        status: 413,
        body: {
          detail:
            "The build context is larger than this server's limit of 256 MiB (base64); build a smaller context or raise --build-max-upload-mb"
        }
      }
      // Refused from its Content-Length, before a byte of it is read; and streamed without a length,
      // refused once the part passes the cap.
      for (const chunked of [false, true]) {
        assert.deepStrictEqual(
          await rawBuild(server.base, KEY, buildForm(gzipLike(200 * 1024 * 1024), tag, []), chunked),
          tooLarge
        )
      }
      assert.strictEqual(imageId(tag), "")

      // 187 MB of base64, under the cap, to a tag outside the prefix: read to its end, then refused.
      const dirs = contextDirs(server).length
      const before = rssMiB(server)
      const large = await rawBuild(server.base, KEY, buildForm(gzipLike(140 * 1024 * 1024), "debian:large", []), true)
      assert.strictEqual(large.status, 403)
      const after = rssMiB(server)
      const rss = `RSS ${fresh.toFixed(0)} MiB fresh, ${before.toFixed(0)} MiB after two refused 200 MB uploads, ${
        after.toFixed(0)
      } MiB after a read 187 MB one`
      console.log(rss)
      // The upload held 6 times its size in memory before (1.2 GB for 200 MB).
      assert.isBelow(after - fresh, 300, rss)
      assert.isBelow(after - before, 64, rss)
      assert.strictEqual(contextDirs(server).length, dirs, "the refused upload's file is removed")
      assert.strictEqual((await call(server.base, "GET", "/registry_prefix", { key: KEY })).status, 200)

      // Only the context may be a file: any other file part is refused, and nothing is kept.
      const extra = buildForm(gzipLike(1024), tag, [])
      extra.append("tags", new Blob([gzipLike(1024)]), "tags.bin")
      const stray = await fetch(`${server.base}/build`, { method: "POST", headers: { "X-API-Key": KEY }, body: extra })
      assert.deepStrictEqual({ status: stray.status, body: await stray.json() }, {
        status: 400,
        body: { detail: "A build request's one file is its context, not tags" }
      })
      assert.strictEqual(contextDirs(server).length, dirs)

      // 16 MiB of zeros gzip to 16 KiB: within a 1 MiB upload cap, and stopped unpacking at 4 MiB.
      const small = await apiServer(["--build-max-upload-mb", "1"])
      const tar = pack()
      tar.entry({ name: "Dockerfile" }, `FROM ${baseImage()}\nCOPY zeros /zeros\n`)
      tar.entry({ name: "zeros" }, Buffer.alloc(16 * 1024 * 1024))
      tar.finalize()
      const chunks: Array<Buffer> = []
      for await (const chunk of tar) chunks.push(chunk as Buffer)
      const bomb = await rawBuild(
        small.base,
        KEY,
        buildForm(gzipSync(Buffer.concat(chunks)).toString("base64"), tag, []),
        false
      )
      assert.strictEqual(bomb.status, 200)
      assert.deepStrictEqual(await waitBuild(small.base, KEY, (bomb.body as { build_id: string }).build_id), {
        status: "FAILURE",
        error: "The build context unpacks to more than 4 MiB (4 times --build-max-upload-mb)"
      })
      assert.strictEqual(imageId(tag), "")
    },
    120_000
  )

  it.live(
    "DockerRuntime's image builder builds a runtime tag again when it holds another image",
    () =>
      Effect.gen(function*() {
        const builder = yield* ImageBuilder
        const suffix = randomBytes(3).toString("hex")
        const options = {
          baseImage: baseImage(),
          userId: 3000 + Number.parseInt(suffix, 16) % 1000,
          username: `t${suffix}`
        }
        const built = yield* builder.ensure(options)
        try {
          const ours = imageId(built)
          // Another image under the tag, even one claiming the tag's label, is not run as the sandbox.
          const forged = spawnSync(
            "docker",
            ["build", "-q", "-t", built, "--label", `effect-sandbox.runtime-image=${built}`, "-"],
            { input: `FROM ${baseImage()}\nRUN echo forged > /forged\n`, encoding: "utf8" }
          )
          assert.strictEqual(forged.status, 0, forged.stderr)
          const forgedId = imageId(built)
          assert.notStrictEqual(forgedId, ours)
          let builds = 0
          const again = yield* builder.ensure(options, Effect.sync(() => builds++))
          assert.strictEqual(again, built)
          assert.strictEqual(builds, 1)
          assert.notStrictEqual(imageId(built), forgedId)
          assert.match(
            dockerCli("image", "inspect", "--format", `{{index .Config.Labels "${CONTEXT_LABEL}"}}`, built).stdout,
            /^[0-9a-f]{64}\n$/
          )
          // Its own image is reused as it is.
          yield* builder.ensure(options, Effect.sync(() => builds++))
          assert.strictEqual(builds, 1)
          dockerCli("rmi", forgedId)
        } finally {
          dockerCli("rmi", "-f", built)
        }
      }).pipe(Effect.provide(ImageBuilder.layer.pipe(Layer.provide(DockerEngine.layer)))),
    300_000
  )
})
