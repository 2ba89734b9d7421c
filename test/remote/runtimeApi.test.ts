/**
 * `effect-sandbox-runtime-api` on Docker, driven by a client written from spec §14 alone
 * (apiServer.ts): the whole life of a sandbox, keys, limits, bad requests, the proxy with a
 * streamed answer, an API server killed and restarted mid-session, and image builds. Every test ends with no
 * container of its sessions left.
 */
import { afterEach, assert, beforeAll, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { request } from "node:http"
import { DEFAULT_SANDBOX_UID } from "../../src/runtimeImage/sandboxUser.ts"
import { dockerCli, inspect } from "../docker/helpers.ts"
import { baseImage, describeDocker } from "../docker/infra.ts"
import {
  type Answer,
  apiServers,
  call,
  newSessionId,
  run,
  sessionContainers,
  type Started,
  waitReady
} from "./apiServer.ts"
import { buildAndWait, buildForm as form } from "./builds.ts"

const KEY = randomBytes(16).toString("hex")
const servers = apiServers(KEY)
const apiServer = servers.start

const start = async (base: string, sessionId: string, extra: Record<string, unknown> = {}) => {
  const answer = await call(base, "POST", "/start", { key: KEY, body: { session_id: sessionId, ...extra } })
  assert.strictEqual(answer.status, 200, JSON.stringify(answer.body))
  return answer.body as unknown as Started
}

const containerGone = async (sessionId: string) => {
  for (let attempt = 0; attempt < 40 && sessionContainers(sessionId).length > 0; attempt++) {
    await new Promise((done) => setTimeout(done, 250))
  }
  assert.deepStrictEqual(sessionContainers(sessionId), [], `containers of ${sessionId} remain`)
}

describeDocker("effect-sandbox-runtime-api (Docker)", () => {
  beforeAll(async () => {
    // The first start builds the runtime image: here, not inside a test's time.
    const server = await apiServer()
    const sid = newSessionId()
    const started = await start(server.base, sid)
    await call(server.base, "POST", "/stop", { key: KEY, body: { runtime_id: started.runtime_id } })
    await containerGone(sid)
  }, 300_000)

  afterEach(async () => {
    await servers.stopAll()
  })

  it("start, execute, pause, resume (shell state kept), stop: every state seen through /sessions", async () => {
    const { base } = await apiServer()
    const sid = newSessionId()
    const started = await start(base, sid, { resource_factor: 0.5 })
    assert.match(started.runtime_id, /^rt-[0-9a-f]{24}$/)
    assert.match(started.url, /^http:\/\/127\.0\.0\.1:\d+$/)
    assert.strictEqual(started.session_api_key.length, 32)
    assert.deepStrictEqual(Object.values(started.work_hosts).sort(), [12000, 12001])

    const ready = await waitReady(base, KEY, started.runtime_id)
    assert.deepStrictEqual(ready, {
      runtime_id: started.runtime_id,
      session_id: sid,
      status: "running",
      pod_status: "ready",
      restart_count: 0,
      restart_reasons: []
    })
    // resource_factor 0.5 of 4 GiB and 2 CPUs.
    const container = await Effect.runPromise(inspect(sessionContainers(sid)[0]!))
    assert.strictEqual(container?.HostConfig.Memory, 2 * 1024 ** 3)
    assert.strictEqual(container?.HostConfig.NanoCpus, 1e9)

    const session = await call(base, "GET", `/sessions/${sid}`, { key: KEY })
    assert.deepStrictEqual(session, {
      status: 200,
      body: { ...started, status: "running" }
    })
    // Without the sandbox's key its server refuses; with it, state lives across actions.
    assert.strictEqual((await run(started.url, "wrong", "true")).status, 403)
    assert.strictEqual((await run(started.url, started.session_api_key, "export X=1")).body["content"], "")
    assert.strictEqual((await run(started.url, started.session_api_key, "echo $X")).body["content"], "1")
    // Our server runs as the sandbox uid and gid, which no host account has (runtimeImage/sandboxUser.ts).
    const ids = `${DEFAULT_SANDBOX_UID}:${DEFAULT_SANDBOX_UID}`
    assert.strictEqual(container?.Config.User, ids)
    assert.strictEqual((await run(started.url, started.session_api_key, "echo $(id -u):$(id -g)")).body["content"], ids)
    // The container holds only the key's digest: in no process's environment, no file, not even PID 1's.
    const key = started.session_api_key
    assert.include(
      container?.Config.Env ?? [],
      `EFFECT_SANDBOX_SESSION_API_KEY_SHA256=${createHash("sha256").update(key).digest("hex")}`
    )
    assert.isFalse((container?.Config.Env ?? []).some((entry) => entry.includes(key)))
    const places = await run(
      started.url,
      key,
      `cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c -e '${key}'; ls -A /tmp`
    )
    assert.strictEqual(String(places.body["content"]).split("\n")[0], "0", String(places.body["content"]))
    assert.notInclude(String(places.body["content"]), ".effect-sandbox-session-key")

    const paused = await call(base, "POST", "/pause", { key: KEY, body: { runtime_id: started.runtime_id } })
    assert.deepStrictEqual(paused, { status: 200, body: { runtime_id: started.runtime_id, status: "paused" } })
    assert.strictEqual((await call(base, "GET", `/sessions/${sid}`, { key: KEY })).body["status"], "paused")
    assert.strictEqual(
      (await call(base, "GET", `/runtime/${started.runtime_id}`, { key: KEY })).body["pod_status"],
      "paused"
    )
    assert.isTrue((await Effect.runPromise(inspect(sessionContainers(sid)[0]!)))?.State.Paused)

    const resumed = await call(base, "POST", "/resume", { key: KEY, body: { runtime_id: started.runtime_id } })
    assert.deepStrictEqual(resumed, { status: 200, body: { runtime_id: started.runtime_id, status: "running" } })
    assert.strictEqual((await call(base, "GET", `/sessions/${sid}`, { key: KEY })).body["status"], "running")
    assert.strictEqual((await run(started.url, started.session_api_key, "echo $X")).body["content"], "1")

    const listed = await call(base, "GET", "/list", { key: KEY })
    const entry = (listed.body["runtimes"] as Array<Record<string, unknown>>).find((r) => r["session_id"] === sid)
    assert.deepInclude(entry, { runtime_id: started.runtime_id, status: "running", url: started.url })
    assert.notProperty(entry, "session_api_key")

    const stopped = await call(base, "POST", "/stop", { key: KEY, body: { runtime_id: started.runtime_id } })
    assert.deepStrictEqual(stopped, { status: 200, body: { runtime_id: started.runtime_id, status: "stopped" } })
    await containerGone(sid)
    assert.deepStrictEqual(await call(base, "GET", `/sessions/${sid}`, { key: KEY }), {
      status: 404,
      body: { detail: `Session ${sid} not found` }
    })
    assert.deepStrictEqual(await call(base, "GET", `/runtime/${started.runtime_id}`, { key: KEY }), {
      status: 404,
      body: { detail: `Runtime ${started.runtime_id} not found` }
    })
  }, 120_000)

  it("a sandbox stopped under the API reads as stopped, its runtime as failed", async () => {
    const { base } = await apiServer()
    const sid = newSessionId()
    const started = await start(base, sid)
    await waitReady(base, KEY, started.runtime_id)
    const container = sessionContainers(sid)[0]!
    await Effect.runPromise(
      Effect.promise(() => import("dockerode")).pipe(
        Effect.flatMap(({ default: Docker }) => Effect.promise(() => new Docker().getContainer(container).kill()))
      )
    )
    const session = await call(base, "GET", `/sessions/${sid}`, { key: KEY })
    assert.deepStrictEqual(session.body, { session_id: sid, runtime_id: started.runtime_id, status: "stopped" })
    const runtime = await call(base, "GET", `/runtime/${started.runtime_id}`, { key: KEY })
    assert.strictEqual(runtime.body["pod_status"], "failed")
    assert.deepStrictEqual(runtime.body["restart_reasons"], ["exited with code 137"])
    // What the server printed before the kill: its `listening` line.
    assert.include(String(runtime.body["last_output"]), "effect-sandbox-server listening")
    await call(base, "POST", "/stop", { key: KEY, body: { runtime_id: started.runtime_id } })
    await containerGone(sid)
  }, 120_000)

  it("refuses a missing key (401) and a wrong one (403) on every endpoint, and makes no sandbox", async () => {
    const { base } = await apiServer()
    const sid = newSessionId()
    const body = { session_id: sid }
    assert.deepStrictEqual(await call(base, "POST", "/start", { body }), {
      status: 401,
      body: { detail: "Missing X-API-Key header" }
    })
    assert.deepStrictEqual(await call(base, "POST", "/start", { key: `${KEY}x`, body }), {
      status: 403,
      body: { detail: "Invalid API Key" }
    })
    for (const path of ["/list", `/sessions/${sid}`, "/runtime/rt-000000000000000000000000"]) {
      assert.strictEqual((await call(base, "GET", path)).status, 401, path)
      assert.strictEqual((await call(base, "GET", path, { key: "wrong" })).status, 403, path)
    }
    for (const path of ["/pause", "/resume", "/stop"]) {
      assert.strictEqual((await call(base, "POST", path, { body: {} })).status, 401, path)
    }
    assert.deepStrictEqual(sessionContainers(sid), [])
  }, 60_000)

  it("answers bad requests with 400 and a detail naming the field, unknown ones with 404", async () => {
    const { base } = await apiServer()
    const bad = await call(base, "POST", "/start", {
      key: KEY,
      body: { session_id: "Has Spaces", resource_factor: 0, working_dir: "relative" }
    })
    assert.deepStrictEqual(bad, {
      status: 400,
      body: {
        detail:
          "Invalid request body: session_id: a session id is 1-128 lower-case letters, digits, '_', '.' or '-', " +
          "starting with a letter or digit; working_dir: an absolute path; resource_factor: Expected a value greater than 0"
      }
    })
    assert.deepStrictEqual(await call(base, "POST", "/stop", { key: KEY, body: { runtime_id: "nope" } }), {
      status: 400,
      body: { detail: "Invalid request body: runtime_id: a runtime id is 'rt-' followed by 24 hexadecimal digits" }
    })
    assert.deepStrictEqual(
      await call(base, "POST", "/pause", { key: KEY, body: { runtime_id: "rt-000000000000000000000000" } }),
      { status: 404, body: { detail: "Runtime rt-000000000000000000000000 not found" } }
    )
    assert.deepStrictEqual(await call(base, "GET", "/runtime/nope", { key: KEY }), {
      status: 400,
      body: { detail: "Invalid path: id: a runtime id is 'rt-' followed by 24 hexadecimal digits" }
    })
    assert.deepStrictEqual(await call(base, "GET", "/start", { key: KEY }), {
      status: 405,
      body: { detail: "Method Not Allowed" }
    })
    // A bad environment entry is named by its key, never echoed (the engine's own refusal quoted the value).
    const secret = "s3cret-value-0f9e8d"
    for (
      const [environment, said] of [
        [{ "": secret }, "the name \"\" is not letters, digits, '_', '-' or '.' (not starting with a digit)"],
        [{ "A=B": secret }, "the name \"A=B\" is not letters, digits, '_', '-' or '.' (not starting with a digit)"],
        [{ TOKEN: `${secret}\0` }, "TOKEN: a value holds no NUL byte"]
      ] as const
    ) {
      const sid = newSessionId()
      const refused = await call(base, "POST", "/start", { key: KEY, body: { session_id: sid, environment } })
      assert.deepStrictEqual(refused, {
        status: 400,
        body: { detail: `Invalid request body: environment${said.startsWith("TOKEN") ? "." : ": "}${said}` }
      })
      assert.deepStrictEqual(sessionContainers(sid), [])
    }
    const notJson = await fetch(`${base}/start`, { method: "POST", headers: { "X-API-Key": KEY }, body: "{" })
    assert.strictEqual(notJson.status, 400)
    assert.match(((await notJson.json()) as { detail: string }).detail, /^The request body is not valid JSON/)
  }, 60_000)

  it("answers 429 with a detail when --max-sandboxes run, and starts none", async () => {
    const { base } = await apiServer(["--max-sandboxes", "1"])
    const first = newSessionId()
    const second = newSessionId()
    const started = await start(base, first)
    assert.deepStrictEqual(await call(base, "POST", "/start", { key: KEY, body: { session_id: second } }), {
      status: 429,
      body: { detail: "Too many sandboxes: 1 of at most 1 are running or paused; stop one or try again later" }
    })
    assert.deepStrictEqual(sessionContainers(second), [])
    // The session's own sandbox is not a new one: starting it again answers it.
    assert.strictEqual((await start(base, first)).runtime_id, started.runtime_id)
    await call(base, "POST", "/stop", { key: KEY, body: { runtime_id: started.runtime_id } })
    await containerGone(first)
  }, 120_000)

  it("keeps sessions across an API server killed and restarted (proxy mode): same runtime, shell state", async () => {
    const first = await apiServer(["--proxy"])
    const sid = newSessionId()
    const started = await start(first.base, sid)
    assert.strictEqual(started.url, `${first.base}/${started.runtime_id}`)
    await waitReady(first.base, KEY, started.runtime_id)
    assert.strictEqual((await run(started.url, started.session_api_key, "export X=restart")).status, 200)

    await first.kill()
    const second = await apiServer(["--proxy"])
    const session = await call(second.base, "GET", `/sessions/${sid}`, { key: KEY })
    assert.deepInclude(session.body, {
      status: "running",
      runtime_id: started.runtime_id,
      session_api_key: started.session_api_key,
      url: `${second.base}/${started.runtime_id}`
    })
    const url = session.body["url"] as string
    assert.strictEqual((await run(url, started.session_api_key, "echo $X")).body["content"], "restart")
    await call(second.base, "POST", "/stop", { key: KEY, body: { runtime_id: started.runtime_id } })
    await containerGone(sid)
  }, 120_000)

  it("caps a resource_factor's memory and CPUs at what the engine has", async () => {
    const { base } = await apiServer()
    const sid = newSessionId()
    // 16 × 4 GiB and 16 × 2 CPUs: more than this engine (or any CI machine) has.
    await start(base, sid, { resource_factor: 16, command: ["sleep", "300"] })
    const [memTotal, cpus] = dockerCli("info", "--format", "{{.MemTotal}} {{.NCPU}}").stdout.trim().split(" ").map(
      Number
    )
    assert.isBelow(memTotal!, 64 * 1024 ** 3)
    const container = await Effect.runPromise(inspect(sessionContainers(sid)[0]!))
    assert.strictEqual(container?.HostConfig.Memory, memTotal)
    assert.strictEqual(container?.HostConfig.NanoCpus, cpus! * 1e9)
  }, 60_000)
  it(
    "answers a keyless /server_info through the proxy with its clocks only, whatever server the sandbox runs",
    async () => {
      const { base } = await apiServer(["--proxy"])
      // A server that tells anyone the host's disk, as OpenHands' own does.
      const server = "require('http').createServer((q, r) => r.end(JSON.stringify(q.url === '/server_info' ? " +
        "{ uptime: 5, idle_time: 2, resources: { disk: { total: 1e12, used: 4e11 } } } : {}))).listen(60000)"
      const sandbox = await start(base, newSessionId(), { command: ["/opt/effect-sandbox/bin/node", "-e", server] })
      await waitReady(base, KEY, sandbox.runtime_id)
      const info = async (headers: Record<string, string>) => {
        const response = await fetch(`${sandbox.url}/server_info`, { headers })
        return { status: response.status, body: await response.json() }
      }
      for (const headers of [{}, { "X-Session-API-Key": "wrong" }, { "X-API-Key": KEY }]) {
        assert.deepStrictEqual(await info(headers), { status: 200, body: { uptime: 5, idle_time: 2 } })
      }
      assert.deepStrictEqual(await info({ "X-Session-API-Key": sandbox.session_api_key }), {
        status: 200,
        body: { uptime: 5, idle_time: 2, resources: { disk: { total: 1e12, used: 4e11 } } }
      })
    },
    120_000
  )

  it("proxies a streamed answer as it is written, and one sandbox's key never opens another's path", async () => {
    const { base } = await apiServer(["--proxy"])
    const [a, b] = [newSessionId(), newSessionId()]
    const sandboxA = await start(base, a)
    const sandboxB = await start(base, b)
    await waitReady(base, KEY, sandboxA.runtime_id)
    await waitReady(base, KEY, sandboxB.runtime_id)

    const sent = Date.now()
    const response = await fetch(`${sandboxA.url}/v1/execute_action/stream`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Session-API-Key": sandboxA.session_api_key },
      body: JSON.stringify({ action: { action: "run", args: { command: "echo first; sleep 3; echo second" } } })
    })
    assert.strictEqual(response.headers.get("content-type"), "application/x-ndjson")
    // A page a sandbox serves on the API's origin runs in an opaque origin (docs/security.md).
    assert.strictEqual(response.headers.get("content-security-policy"), "sandbox")
    const reader = response.body!.getReader()
    const firstChunk = new TextDecoder().decode((await reader.read()).value)
    const firstAt = Date.now() - sent
    let rest = ""
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      rest += new TextDecoder().decode(chunk.value)
    }
    // A line's newline comes with it (issue 23: the chunks joined are the content).
    assert.deepStrictEqual(JSON.parse(firstChunk.split("\n")[0]!), { type: "output", text: "first\n" })
    assert.isBelow(firstAt, 2_500, "the first line came only with the rest: the proxy buffered the stream")
    assert.isAtLeast(Date.now() - sent, 3_000)
    const last = JSON.parse(rest.trim().split("\n").at(-1)!) as { type: string; observation: { content: string } }
    assert.strictEqual(last.type, "observation")
    assert.strictEqual(last.observation.content, "first\nsecond")

    // A's key on B's path, the API key, or none: refused by the proxy before B is reached.
    for (const headers of [{ "X-Session-API-Key": sandboxA.session_api_key }, { "X-API-Key": KEY }, {}]) {
      const refused = await fetch(`${sandboxB.url}/execute_action`, {
        method: "POST",
        headers: { "Content-Type": "application/json", ...headers },
        body: JSON.stringify({ action: { action: "run", args: { command: "touch /tmp/reached" } } })
      })
      assert.deepStrictEqual(
        { status: refused.status, body: await refused.json() },
        { status: 403, body: { detail: "Invalid Session API Key" } }
      )
    }
    assert.strictEqual(
      (await run(sandboxB.url, sandboxB.session_api_key, "ls /tmp/reached")).body["content"],
      "ls: cannot access '/tmp/reached': No such file or directory"
    )

    // A paused runtime answers 503 through the proxy (OpenHands' client resumes it).
    assert.deepStrictEqual(
      await call(base, "POST", "/pause", { key: KEY, body: { runtime_id: sandboxA.runtime_id } }),
      { status: 200, body: { runtime_id: sandboxA.runtime_id, status: "paused" } }
    )
    const whilePaused = await fetch(`${sandboxA.url}/alive`, {
      headers: { "X-Session-API-Key": sandboxA.session_api_key }
    })
    assert.deepStrictEqual(
      { status: whilePaused.status, body: await whilePaused.json() },
      { status: 503, body: { detail: `Runtime ${sandboxA.runtime_id} is paused` } }
    )
    for (const started of [sandboxA, sandboxB]) {
      await call(base, "POST", "/stop", { key: KEY, body: { runtime_id: started.runtime_id } })
    }
    await containerGone(a)
    await containerGone(b)
  }, 120_000)

  it(
    "runs a given command exactly, OpenHands' way; the proxy drops the API key and refuses ambiguous paths",
    async () => {
      const { base } = await apiServer(["--proxy"])
      const sid = newSessionId()
      // A stand-in for OpenHands' server: answers every path with what it was started with and sent.
      const echo = "require('http').createServer((q, r) => r.end(JSON.stringify({ path: q.url, headers: q.headers, " +
        "key: process.env.SESSION_API_KEY, cwd: process.cwd(), x: process.env.X }))).listen(60000)"
      const started = await start(base, sid, {
        command: ["/opt/effect-sandbox/bin/node", "-e", echo],
        working_dir: "/tmp",
        environment: { X: "from-start" }
      })
      await waitReady(base, KEY, started.runtime_id)
      const answer = await fetch(`${started.url}/some/path?q=1`, {
        headers: { "X-Session-API-Key": started.session_api_key, "X-API-Key": KEY, "X-Other": "kept" }
      })
      const seen = await answer.json() as {
        path: string
        headers: Record<string, string>
        key: string
        cwd: string
        x: string
      }
      assert.deepInclude(seen, { path: "/some/path?q=1", key: started.session_api_key, cwd: "/tmp", x: "from-start" })
      assert.strictEqual(seen.headers["x-other"], "kept")
      assert.strictEqual(seen.headers["x-session-api-key"], started.session_api_key)
      assert.notProperty(seen.headers, "x-api-key")
      // `..` cannot lead from one runtime's path to another's or to the API's (sent as is: fetch would resolve it).
      const ambiguous = await rawGet(`${base}/${started.runtime_id}/../list`, {
        "X-Session-API-Key": started.session_api_key,
        "X-API-Key": KEY
      })
      assert.strictEqual(ambiguous.status, 400)
      assert.match(JSON.parse(ambiguous.body).detail, /^Ambiguous request path/)
      await call(base, "POST", "/stop", { key: KEY, body: { runtime_id: started.runtime_id } })
      await containerGone(sid)
    },
    120_000
  )

  it(
    "pauses an idle sandbox after --idle-pause-after and removes it after --idle-stop-after; traffic keeps it",
    async () => {
      const { base } = await apiServer(["--proxy", "--idle-pause-after", "2", "--idle-stop-after", "5"])
      const sid = newSessionId()
      const started = await start(base, sid)
      await waitReady(base, KEY, started.runtime_id)
      // Proxied requests are activity: 4 s of them (twice the pause limit) and it still runs.
      for (const until = Date.now() + 4_000; Date.now() < until;) {
        const alive = await fetch(`${started.url}/alive`, { headers: { "X-Session-API-Key": started.session_api_key } })
        assert.strictEqual(alive.status, 200)
        await new Promise((resolve) => setTimeout(resolve, 500))
      }
      assert.strictEqual((await call(base, "GET", `/sessions/${sid}`, { key: KEY })).body["status"], "running")
      // Then silence: paused after about 2 s, removed after about 5 s.
      const pausedAfter = await sessionUntil(base, sid, (a) => a.body["status"] === "paused", 6_000)
      assert.isAtLeast(pausedAfter, 1_000)
      await sessionUntil(base, sid, (a) => a.status === 404, 8_000)
      await containerGone(sid)
    },
    120_000
  )

  it("builds an image from a base64 context.tar.gz, as OpenHands' remote builder sends it", async () => {
    const { base } = await apiServer(["--registry-prefix", "localhost/rapi"])
    assert.deepStrictEqual(await call(base, "GET", "/registry_prefix", { key: KEY }), {
      status: 200,
      body: { registry_prefix: "localhost/rapi" }
    })
    const tag = `localhost/rapi/runtime:t${randomBytes(4).toString("hex")}`
    const other = `${tag}-lock`
    assert.deepStrictEqual((await call(base, "GET", query(tag), { key: KEY })).body, { exists: false, image: null })
    try {
      const built = await buildAndWait(base, KEY, tag, [other], `FROM ${baseImage()}\nRUN echo built > /built\n`)
      assert.deepStrictEqual(built, { status: "SUCCESS", image: tag })
      for (const image of [tag, other]) {
        const exists = await call(base, "GET", query(image), { key: KEY })
        assert.strictEqual(exists.body["exists"], true, image)
        assert.isAbove((exists.body["image"] as { image_size_bytes: number }).image_size_bytes, 0)
      }
      assert.strictEqual(dockerCli("run", "--rm", tag, "cat", "/built").stdout, "built\n")

      const failed = await buildAndWait(base, KEY, `${tag}-bad`, [], `FROM ${baseImage()}\nRUN exit 3\n`)
      assert.strictEqual(failed["status"], "FAILURE")
      assert.match(failed["error"] as string, /returned a non-zero code: 3/)
    } finally {
      dockerCli("rmi", "-f", tag, other, `${tag}-bad`)
    }
    const bad = await fetch(`${base}/build`, {
      method: "POST",
      headers: { "X-API-Key": KEY },
      body: form("bm90IGd6aXA=", "x:y", [])
    })
    assert.deepStrictEqual(
      { status: bad.status, body: await bad.json() },
      { status: 400, body: { detail: "The build context must be base64 of a gzip tar (context.tar.gz)" } }
    )
    assert.deepStrictEqual(await call(base, "GET", "/build_status?build_id=build-unknown", { key: KEY }), {
      status: 404,
      body: { detail: "Build build-unknown not found" }
    })
  }, 120_000)
})

/** GET with the path exactly as written (no `..` resolution, which fetch would do). */
const rawGet = (url: string, headers: Record<string, string>) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const { hostname, port } = new URL(url)
    const path = url.slice(url.indexOf("/", "http://".length))
    request({ hostname, port, path, headers }, (response) => {
      let body = ""
      response.on("data", (chunk: Buffer) => body += chunk.toString("utf8"))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }))
    }).on("error", reject).end()
  })

const query = (image: string) => `/image_exists?image=${encodeURIComponent(image)}`

/** Poll `/sessions/{sid}` every 250 ms until `done` holds of its answer (at most `ms`); how long that took. */
const sessionUntil = async (base: string, sid: string, done: (answer: Answer) => boolean, ms: number) => {
  const since = Date.now()
  while (Date.now() - since < ms) {
    if (done(await call(base, "GET", `/sessions/${sid}`, { key: KEY }))) return Date.now() - since
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new Error(`session ${sid} did not reach the expected state within ${ms} ms`)
}
