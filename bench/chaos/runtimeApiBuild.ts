/**
 * The runtime-api group's `/build` rows (docs/security.md, "The runtime API server"): someone with
 * only the API key tries to retag images other owners and the host run, to reach a host service
 * and a sandbox's port from a build step, to outgrow the build limits (memory, time, concurrency,
 * upload size), and to leave a build running behind a killed server. Its own API server, with
 * small limits so each row ends in seconds.
 */
import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { type ApiServer, startApiServer } from "../../scripts/runtimeApiProcess.ts"
import { buildForm, gzipLike, postBuild, rawBuild, waitBuild } from "../../test/remote/builds.ts"
import { baseImage } from "./ownerProcess.ts"
import { atLeast, atMost, type Row, waitFor } from "./rows.ts"

const TIMEOUT_S = 4
const CONCURRENCY = 3
const MEMORY_MB = 128
const UPLOAD_MB = 160

const docker = (...args: Array<string>) => spawnSync("docker", args, { encoding: "utf8" }).stdout.trim()

/** An image's id, or "" when the engine has none. */
const imageId = (image: string) => docker("image", "inspect", "--format", "{{.Id}}", image)

/** Build step containers (running or not) whose command holds `marker`. */
const stepContainers = (marker: string) =>
  docker("ps", "-a", "--no-trunc", "--format", "{{.Command}}").split("\n").filter((line) => line.includes(marker))

const rssMiB = (server: ApiServer) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${server.process.pid}/status`, "utf8"))![1]) / 1024

/** A step that prints REACHED when `host:port` answers, else BLOCKED, and fails either way. */
const probeStep = (host: string, port: number) =>
  `RUN bash -c '(exec 3<>/dev/tcp/${host}/${port} && echo REACHED) 2>/dev/null || echo BLOCKED; exit 7'`

/** The hostile tags: Docker Hub's images in every spelling, a runtime tag, another registry, and the prefix's own base image (409). */
const hostileTags = (runtimeTag: string) => [
  "debian:bookworm",
  "docker.io/library/debian:bookworm",
  "index.docker.io/library/postgres:16",
  "postgres:16",
  runtimeTag,
  baseImage(),
  "effect-sandbox/../library/debian:bookworm",
  "localhost/effect-sandbox/runtime:x",
  "effect-sandbox-runtime/runtime:x"
]

/** `/build` rows; `sandbox` is a running sandbox container of the group, whose port 60000 a build step must not reach. */
export const buildRows = async ({ quick, sandbox }: { quick: boolean; sandbox: string }): Promise<Array<Row>> => {
  const key = randomBytes(16).toString("hex")
  const mark = randomBytes(4).toString("hex")
  const runtimeTag = `effect-sandbox-runtime:chaos${mark}`
  docker("tag", baseImage(), runtimeTag)
  const listener = createServer((_, response) => response.end("host secret\n"))
  let hostConnections = 0
  listener.on("connection", () => hostConnections++)
  await new Promise<void>((listening) => listener.listen(0, "0.0.0.0", listening))
  const server = await startApiServer([
    "--build-timeout",
    String(TIMEOUT_S),
    "--build-concurrency",
    String(CONCURRENCY),
    "--build-memory-mb",
    String(MEMORY_MB),
    "--build-max-upload-mb",
    String(UPLOAD_MB)
  ], { EFFECT_SANDBOX_API_KEY: key })
  const fresh = rssMiB(server)
  const base = `FROM ${baseImage()}\n`
  const tag = `effect-sandbox/chaos-build:t${mark}`
  try {
    // Hostile tags, as the target and beside a harmless one: refused before any build.
    const tags = hostileTags(runtimeTag)
    const before = tags.map(imageId)
    let hostileSent = 0
    let hostileAccepted = 0
    for (let round = 0; round < (quick ? 1 : 3); round++) {
      for (const hostile of tags) {
        for (const [target, extra] of [[hostile, []], [tag, [hostile]]] as const) {
          const answer = await postBuild(server.base, key, target, extra, `${base}RUN echo poisoned > /p\n`)
          hostileSent++
          if (answer.status < 300) hostileAccepted++
        }
      }
    }
    const changed = tags.filter((image, i) => imageId(image) !== before[i]).length
    const builtAnyway = imageId(tag) === "" ? 0 : 1

    // A hung build, and beside it a quick one, two probes and a memory hog.
    const started = performance.now()
    const hung = await postBuild(server.base, key, `${tag}-hung`, [], `${base}RUN sleep infinity # ${mark}\n`)
    const gateway = docker("inspect", "--format", "{{range .NetworkSettings.Networks}}{{.Gateway}} {{end}}", sandbox)
      .split(" ")[0]!
    const sandboxIp = docker(
      "inspect",
      "--format",
      "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}",
      sandbox
    )
      .split(" ")[0]!
    const others = await Promise.all(
      [
        `${base}RUN echo quick\n`,
        `${base}${probeStep(gateway, (listener.address() as AddressInfo).port)}\n`,
        `${base}${probeStep(sandboxIp, 60000)}\n`,
        `${base}RUN perl -e '$x = "x" x (${4 * MEMORY_MB} * 1024 * 1024); print length $x'\n`,
        `${base}ADD http://127.0.0.1:${(listener.address() as AddressInfo).port}/secret /s\n`
      ].map(async (dockerfile, i) =>
        waitBuild(
          server.base,
          key,
          (await postBuild(server.base, key, `${tag}-${i}`, [], dockerfile)).body["build_id"] as string
        )
      )
    )
    const hungState = await waitBuild(server.base, key, hung.body["build_id"] as string)
    const stoppedAfter = (performance.now() - started) / 1000
    const leftAfterTimeout = (await waitFor(() => stepContainers(mark).length === 0, 10_000)) === null ? 1 : 0
    const [quickBuild, hostProbe, sandboxProbe, hog, remoteAdd] = others.map((state) => ({
      status: state["status"],
      error: String(state["error"] ?? "")
    }))
    const probes = [hostProbe!, sandboxProbe!]
    const probesRan = probes.filter((p) => /\n(REACHED|BLOCKED)\n/.test(p.error)).length
    const probesReached = probes.filter((p) => /\nREACHED(\n|$)/.test(p.error)).length

    // Uploads: one above the cap (streamed), and one just under it (112 MiB, base64 150 MiB), read
    // to its end and refused for its tag. The server held 6 times an upload's size before.
    const over = await rawBuild(server.base, key, buildForm(gzipLike(UPLOAD_MB * 1024 * 1024), tag, []), true)
    await rawBuild(server.base, key, buildForm(gzipLike(112 * 1024 * 1024), "debian:x", []), true)
    const rssGrowth = rssMiB(server) - fresh

    // More hung builds than the bound admits, then the server killed under them.
    const flood = `${mark}f`
    const answers: Array<number> = []
    for (let i = 0; i < 2 * CONCURRENCY + 2; i++) {
      answers.push(
        (await postBuild(server.base, key, `${tag}-f${i}`, [], `${base}RUN sleep infinity # ${flood}\n`)).status
      )
    }
    const admitted = answers.filter((status) => status === 200).length
    await waitFor(() => stepContainers(flood).length === CONCURRENCY, 10_000)
    const runningWhenKilled = stepContainers(flood).length
    await server.kill()
    const leftAfterKill = (await waitFor(() => stepContainers(flood).length === 0, 15_000)) === null
      ? stepContainers(flood).length
      : 0
    // The killed server's contexts, removed by the next server to start.
    const killedContexts = () =>
      readdirSync(tmpdir()).filter((name) => name.startsWith(`effect-sandbox-build-context-${server.process.pid}-`))
    const contextsAtKill = killedContexts().length
    await (await startApiServer([], { EFFECT_SANDBOX_API_KEY: key })).kill()
    const contextsLeft = killedContexts().length

    return [
      atLeast("runtime-api build: hostile tag requests sent", hostileSent, "requests", 2 * tags.length),
      atMost(`runtime-api build: hostile tags answered 2xx (of ${hostileSent})`, hostileAccepted, "answers", 0),
      atMost(`runtime-api build: images a hostile tag changed (of ${tags.length})`, changed, "images", 0),
      atMost("runtime-api build: images built for refused requests", builtAnyway, "images", 0),
      atLeast(
        `runtime-api build: a RUN sleep infinity stopped as TIMEOUT at the ${TIMEOUT_S} s limit`,
        hungState["status"] === "TIMEOUT" ? 1 : 0,
        "builds",
        1
      ),
      atMost("runtime-api build: seconds until the hung build was stopped", stoppedAfter, "s", TIMEOUT_S + 8),
      atMost("runtime-api build: step containers left by the stopped build", leftAfterTimeout, "containers", 0),
      atLeast(
        "runtime-api build: a build completed while a hung one ran",
        quickBuild!.status === "SUCCESS" ? 1 : 0,
        "builds",
        1
      ),
      atLeast("runtime-api build: network probes that ran in a build step (of 2)", probesRan, "probes", 2),
      atMost(
        "runtime-api build: probes that reached a host service or a sandbox's port (of 2)",
        probesReached,
        "probes",
        0
      ),
      atLeast(
        "runtime-api build: ADD of a host-loopback URL (the engine would fetch it) refused",
        remoteAdd!.status === "FAILURE" && remoteAdd!.error.includes("the engine would fetch it itself") ? 1 : 0,
        "builds",
        1
      ),
      atMost(
        "runtime-api build: host service connections from builds (steps and ADD)",
        hostConnections,
        "connections",
        0
      ),
      atLeast(
        `runtime-api build: a step allocating 4x --build-memory-mb ${MEMORY_MB} ended by the limit`,
        hog!.status === "FAILURE" && hog!.error.includes("returned a non-zero code: 137") ? 1 : 0,
        "builds",
        1
      ),
      atLeast(
        `runtime-api build: upload of ${
          Math.round(UPLOAD_MB * 4 / 3)
        } MiB, above the ${UPLOAD_MB} MiB cap, answered 413`,
        over.status === 413 ? 1 : 0,
        "answers",
        1
      ),
      atMost("runtime-api build: API server RSS over fresh after uploads of 213 and 150 MiB", rssGrowth, "MiB", 384),
      atMost(
        `runtime-api build: builds admitted of ${answers.length} (bound: ${CONCURRENCY} running, ${CONCURRENCY} waiting)`,
        admitted,
        "builds",
        2 * CONCURRENCY
      ),
      atLeast(
        "runtime-api build: hung builds running at once when the server was killed",
        runningWhenKilled,
        "builds",
        CONCURRENCY
      ),
      atMost(
        "runtime-api build: step containers left after the server was killed mid-build",
        leftAfterKill,
        "containers",
        0
      ),
      atMost(
        `runtime-api build: contexts of the killed server left once another started (of ${contextsAtKill})`,
        contextsLeft,
        "directories",
        0
      )
    ]
  } finally {
    await server.kill()
    listener.close()
    spawnSync("docker", ["rmi", runtimeTag, `${tag}-0`], { stdio: "ignore" })
  }
}
