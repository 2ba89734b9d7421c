/**
 * RunloopRuntime's start through the SDK against the stand-in: what it asks Runloop for (the
 * blueprint, our metadata, the idle policy and keep-alive, the authenticated tunnel, the devbox
 * user and size, as the stand-in recorded the requests, over HTTP/2), where the session key goes,
 * the tunnel's token, and the start failures with their messages (a refused key, the quota, a
 * rate limit retried by us alone, a blueprint without our server or Node, bad options), none of
 * which leaves a devbox behind; and the payload uploaded into a blueprint that has only a Node.
 * The blueprint's server is started at once, without a probe, its `listening` line heard in the
 * execution's output stream (which the stand-in serves as Runloop does, checked through the SDK);
 * a stream that fails, or idles past Runloop's hold, still gets the start to READY.
 */
import { assert, it } from "@effect/vitest"
import { Runloop } from "@runloop/api-client"
import { Effect, Layer, Redacted, Schedule } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { IMAGE_SERVER_FOUND, NO_IMAGE_SERVER } from "../../../src/hosted/serverFiles.ts"
import {
  type InvalidOptionsError,
  type ProviderReason,
  type RuntimeStartError,
  SandboxConfig
} from "../../../src/index.ts"
import { RunloopRuntime, type RunloopRuntimeOptions } from "../../../src/runloop.ts"
import { payloadDirectory } from "../../../src/serverStart/payload.ts"
import { buildRuntime, startError } from "../../docker/helpers.ts"
import { describeDocker } from "../../docker/infra.ts"
import { assertReadyAtFirstAlive } from "../aliveAttempts.ts"
import { keyCheck } from "../keyCheck.ts"
import { docker } from "../standin.ts"
import type { Devbox } from "./devboxes.ts"
import { devboxOf, runloopLayer, standInOptions, useStandIn } from "./fixture.ts"
import type { RunloopStandIn } from "./server.ts"

/** Runloop's create route, for a fault (the path alone would match every devbox route under it). */
const CREATE = { method: "POST", path: /^\/v1\/devboxes$/ } as const

/** The next `count` creates answered with `status` and Runloop's `message`. */
const failCreates = (standIn: RunloopStandIn, status: number, message: string, count = 1) =>
  standIn.faults.inject(CREATE, { kind: "status", status, message }, count)

const creates = (standIn: RunloopStandIn) =>
  standIn.requests.filter((r) => r.method === "POST" && r.path === "/v1/devboxes")

/** The start's error, as the typed error it must be. */
const startFailure = (layer: Parameters<typeof startError>[0]) =>
  startError(layer).pipe(Effect.map((error) => error as RuntimeStartError | InvalidOptionsError))

/** A start error that is Runloop's refusal, with its reason and status as data. */
const assertRefusal = (error: RuntimeStartError | InvalidOptionsError, reason: ProviderReason, status: number) => {
  assert.strictEqual(error._tag, "RuntimeStartError")
  const start = error as RuntimeStartError
  assert.strictEqual(start.reason, "provider")
  assert.deepStrictEqual([start.provider?.provider, start.provider?.reason, start.provider?.status], [
    "Runloop",
    reason,
    status
  ])
}

/** The tag and message of options refused before anything is sent. */
const refusal = (message: string) => ["InvalidOptionsError", `RunloopRuntime options: ${message}`]

/** The API requests about `devbox` whose path ends with `action` (`/execute_async`, ...). */
const requestsOf = (standIn: RunloopStandIn, devbox: Devbox, action: string) =>
  standIn.requests.filter((r) => r.path.startsWith(`/v1/devboxes/${devbox.id}/`) && r.path.endsWith(action))

/** When the runtime asked the devbox's server for `/alive` (through the tunnel), in ms. */
const aliveTimes = (standIn: RunloopStandIn, devbox: Devbox) =>
  standIn.tunnelRequests.filter((r) => r.url === `/8000-${devbox.tunnel!.tunnel_key}/alive`).map((r) => r.at)

/** How many times the runtime asked the devbox's server for `/alive`. */
const aliveAttempts = (standIn: RunloopStandIn, devbox: Devbox) => aliveTimes(standIn, devbox).length

/**
 * A start on the blueprint's own server: started at once, no command before it (no probe); READY
 * at the first `/alive` when the `listening` line was heard in time.
 */
const assertImageServerStarted = (standIn: RunloopStandIn, devbox: Devbox) => {
  assert.strictEqual(requestsOf(standIn, devbox, "/execute").length, 0)
  assert.strictEqual(requestsOf(standIn, devbox, "/execute_async").length, 1)
}

/** A stream request's refusal, as the SDK words it. */
const streamRefusal = (stream: Promise<unknown>) => stream.then(() => "streamed", (error: Error) => error.message)

/** Every devbox the stand-in made is shut down. */
const assertAllShutDown = (standIn: RunloopStandIn) =>
  assert.deepStrictEqual(
    [...standIn.devboxes.byId.values()].filter((d) => d.status !== "shutdown").map((d) => d.id),
    []
  )

describeDocker("RunloopRuntime start (stand-in)", () => {
  const standIn = useStandIn()

  it.live(
    "creates from the blueprint with our metadata, idle policy, tunnel and size; the key never sits in the environment; no IDE without `vscode`",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const before = creates(s).length
        const { rt, release } = yield* buildRuntime(
          runloopLayer(s, {
            sessionId: "rl-start",
            idleTimeout: "15 minutes",
            cpus: 2,
            memoryMiB: 4096,
            diskGiB: 8,
            appPorts: [8080],
            env: { RL_FROM_OPTIONS: "set on create" }
          })
        )
        const request = creates(s)[before]!
        // The SDK's own transport: HTTP/2 (h2c to an http:// base URL).
        assert.strictEqual(request.httpVersion, "2.0")
        const body = request.body as Record<string, any>
        assert.strictEqual(body["blueprint_name"], "effect-sandbox-runtime")
        assert.deepStrictEqual(body["tunnel"], { auth_mode: "authenticated", http_keep_alive: true })
        assert.deepStrictEqual(body["launch_parameters"], {
          resource_size_request: "CUSTOM_SIZE",
          custom_cpu_cores: 2,
          custom_gb_memory: 4,
          custom_disk_size: 8,
          keep_alive_time_seconds: 172_800,
          after_idle: { idle_time_seconds: 900, on_idle: "shutdown" },
          lifecycle: { after_idle: { idle_time_seconds: 900, on_idle: "shutdown" } },
          user_parameters: { username: "user", uid: 1000 }
        })
        const metadata = body["metadata"] as Record<string, string>
        assert.strictEqual(metadata["effect-sandbox.managed"], "true")
        assert.strictEqual(metadata["effect-sandbox.session"], "rl-start")
        assert.strictEqual(metadata["effect-sandbox.owner.pid"], String(process.pid))
        assert.strictEqual(metadata["effect-sandbox.keep-alive"], "false")
        const key = metadata["effect-sandbox.session-key"]!
        const env = body["environment_variables"] as Record<string, string>
        assert.notProperty(env, "EFFECT_SANDBOX_SESSION_API_KEY_FILE")
        assert.strictEqual(env["RL_FROM_OPTIONS"], "set on create")
        assert.isFalse(Object.values(env).some((v) => v.includes(key)))
        assert.notProperty(env, "VSCODE_PORT")
        // The server got the key's digest, never the key: no process environment, no file holds it.
        const check = yield* rt.runCommand(`whoami; echo "$RL_FROM_OPTIONS"; ${keyCheck(key)}`)
        assert.strictEqual(check.content, "user\nset on create\ndigest=yes\nkey=0")
        const devbox = devboxOf(s, "rl-start")
        // The blueprint's server started at once, no probe before it, and its `listening` line heard in the
        // execution's output stream: READY at the first `/alive`, no poll.
        assertImageServerStarted(s, devbox)
        assert.strictEqual(requestsOf(s, devbox, "/stream_stdout_updates").length, 1)
        assertReadyAtFirstAlive(aliveTimes(s, devbox))
        // `keep_alive_time_seconds` counts from creation unless the top-level `after_idle` is set: it is, so the
        // devbox lives while its owner keeps it busy, not 15 minutes (or Runloop's default hour) after creation.
        assert.isUndefined(devbox.lifeEndsAt)
        const container = yield* Effect.promise(() => devbox.container!.inspect())
        assert.strictEqual(container.HostConfig.NanoCpus, 2e9)
        assert.strictEqual(rt.info.kind, "runloop")
        assert.strictEqual(rt.info.urls["actionServer"], s.tunnelUrl(8000, devbox.tunnel!.tunnel_key))
        assert.strictEqual(rt.info.urls["app-8080"], s.tunnelUrl(8080, devbox.tunnel!.tunnel_key))
        // The tunnel answers only with its token (which the runtime sends on every request, never in a URL).
        const bare = yield* Effect.promise(() => fetch(`${rt.info.urls["actionServer"]}/alive`))
        assert.strictEqual(bare.status, 401)
        assert.isFalse(Object.values(rt.info.urls).some((url) => url.includes(devbox.tunnel!.auth_token!)))
        // Without `vscode` no IDE: no URL, and nothing listens on its port behind the tunnel.
        assert.notProperty(rt.info.urls, "vscode")
        const ide = yield* Effect.promise(() =>
          fetch(`${s.tunnelUrl(8001, devbox.tunnel!.tunnel_key)}/`, {
            headers: { "x-runloop-tunnel-authorization": `Bearer ${devbox.tunnel!.auth_token}` }
          })
        )
        assert.strictEqual(ide.status, 502)
        yield* release
        assert.strictEqual(devbox.status, "shutdown")
        const gone = yield* Effect.promise(() =>
          docker.getContainer(container.Id).inspect().then(() => false, () => true)
        )
        assert.isTrue(gone)
      }),
    120_000
  )

  it.live(
    "a refused API key: Runloop's message and what to check, as the reason `unauthorized`",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const error = yield* startFailure(runloopLayer(s, { apiKey: Redacted.make("ak_wrong") }))
        assert.strictEqual(
          error.message,
          "Runloop could not create a devbox from blueprint effect-sandbox-runtime: 401 Invalid API key " +
            "(Runloop refused the API key: check RUNLOOP_API_KEY or the `apiKey` option)"
        )
        assertRefusal(error, "unauthorized", 401)
        assertAllShutDown(s)
      }),
    60_000
  )

  it.live(
    "no API key at all is an InvalidOptionsError naming RUNLOOP_API_KEY, and nothing is sent",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const before = s.requests.length
        const saved = process.env["RUNLOOP_API_KEY"]
        delete process.env["RUNLOOP_API_KEY"]
        const { apiKey: _, ...rest } = standInOptions(s)
        const error = yield* startFailure(RunloopRuntime.layer(rest)).pipe(
          Effect.ensuring(Effect.sync(() => saved === undefined || (process.env["RUNLOOP_API_KEY"] = saved)))
        )
        assert.strictEqual(error._tag, "InvalidOptionsError")
        assert.strictEqual(
          error.message,
          "RunloopRuntime options: no apiKey given and RUNLOOP_API_KEY is not set (a Runloop API key, ak_...)."
        )
        assert.strictEqual(s.requests.length, before)
      }),
    60_000
  )

  it.live("an unknown blueprint: Runloop's 404 text, as the reason `image-missing`", () =>
    Effect.gen(function*() {
      const s = standIn()
      const error = yield* startFailure(runloopLayer(s, { blueprint: "no-such-blueprint" }))
      assert.strictEqual(
        error.message,
        "Runloop could not create a devbox from blueprint no-such-blueprint: 404 Blueprint with name no-such-blueprint not found"
      )
      assertRefusal(error, "image-missing", 404)
      assertAllShutDown(s)
    }), 60_000)

  it.live(
    "the account's quota: Runloop's message as the reason `quota`, nothing created",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const devboxes = s.devboxes.byId.size
        failCreates(s, 403, "Maximum number of running devboxes (10) reached")
        const error = yield* startFailure(runloopLayer(s))
        assert.strictEqual(
          error.message,
          "Runloop could not create a devbox from blueprint effect-sandbox-runtime: 403 Maximum number of running " +
            "devboxes (10) reached (the account's quota or plan refuses it: shut down devboxes or raise the limits)"
        )
        assertRefusal(error, "quota", 403)
        assert.strictEqual(s.devboxes.byId.size, devboxes)
      }),
    60_000
  )

  it.live("a rate limit is retried with backoff until Runloop accepts", () =>
    Effect.gen(function*() {
      const s = standIn()
      const before = creates(s).length
      failCreates(s, 429, "Too many requests", 2)
      const { rt, release } = yield* buildRuntime(runloopLayer(s))
      assert.strictEqual(creates(s).length - before, 3)
      assert.strictEqual((yield* rt.runCommand("echo after-429")).content, "after-429")
      yield* release
      assertAllShutDown(s)
    }), 120_000)

  it.live(
    "our retry is the only one: with the SDK's own off, a lasting 429 costs exactly 1 + our retries",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const before = creates(s).length
        // Three refusals: the SDK's own retry (5 by default) would swallow them and the start would succeed.
        failCreates(s, 429, "Too many requests", 3)
        const error = yield* startFailure(runloopLayer(s, { providerRetry: Schedule.recurs(2) }))
        assert.strictEqual(creates(s).length - before, 3)
        assert.strictEqual(
          error.message,
          "Runloop could not create a devbox from blueprint effect-sandbox-runtime: 429 Too many requests " +
            "(Runloop's rate limit: still refused after retrying with backoff)"
        )
        assertRefusal(error, "rate-limited", 429)
        assertAllShutDown(s)
      }),
    60_000
  )

  it.live(
    "a server that dies at start fails the start at once with its exit code and last output, and the devbox is shut down",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        // The server's Node cannot load a preload it is told to: it exits with code 1 before it listens.
        const error = yield* startFailure(
          runloopLayer(s, { sessionId: "rl-exit", env: { NODE_OPTIONS: "--require /no/such/preload.cjs" } })
        )
        const devbox = devboxOf(s, "rl-exit")
        assert.strictEqual(error._tag, "RuntimeStartError")
        const start = error as RuntimeStartError
        assert.deepStrictEqual([start.reason, start.exitCode], ["server-exited", 1])
        assert.include(start.output, "Cannot find module '/no/such/preload.cjs'")
        assert.isTrue(
          start.message.startsWith(
            `The action server in Runloop devbox ${devbox.id} exited with code 1 before it answered. Its last output:\n`
          )
        )
        assert.include(start.message, "Cannot find module '/no/such/preload.cjs'")
        assertAllShutDown(s)
      }),
    120_000
  )

  it.live(
    "a blueprint without our server or Node names what it lacks, and the devbox is shut down",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const error = yield* startFailure(runloopLayer(s, { blueprint: "base" }))
        assert.strictEqual(
          error.message,
          "The Runloop blueprint base has no action-server payload (/opt/effect-sandbox/payload/server.mjs) and no " +
            "Node.js on its PATH to run an uploaded one: make the blueprint from the runtime image " +
            "(docs/runtimes/runloop.md, \"Making the blueprint\"), or use a blueprint with Node 22.19 or newer."
        )
        assertAllShutDown(s)
      }),
    120_000
  )

  it.live(
    "a blueprint with Node but no payload gets the payload uploaded and runs it, in ~/workspace, where an attach finds it",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const { rt, release } = yield* buildRuntime(
          runloopLayer(s, {
            blueprint: "node-only",
            sessionId: "rl-upload",
            sandbox: new SandboxConfig({ keepRuntimeAlive: true })
          })
        )
        assert.strictEqual(rt.info.workspace, "/home/user/workspace")
        const ran = yield* rt.runCommand(
          "pwd; test -e /opt/effect-sandbox; echo $?; ls ~/.effect-sandbox/payload/server.mjs"
        )
        assert.strictEqual(ran.content, "/home/user/workspace\n1\n/home/user/.effect-sandbox/payload/server.mjs")
        const devbox = devboxOf(s, "rl-upload")
        const uploads = s.requests.filter((r) => r.path === `/v1/devboxes/${devbox.id}/upload_file`)
        const manifest = JSON.parse(readFileSync(join(yield* payloadDirectory, "manifest.json"), "utf8")) as {
          files: Array<string>
        }
        assert.strictEqual(uploads.length, manifest.files.length)
        // The blueprint's server was tried first: that line exited 78 having started nothing, then the probe
        // and the upload, then the uploaded server.
        assert.strictEqual(requestsOf(s, devbox, "/execute_async").length, 2)
        const [imageLine] = [...s.devboxes.executions.values()].filter((e) => e.devboxId === devbox.id)
        assert.deepStrictEqual([imageLine!.status, imageLine!.exitStatus], ["completed", NO_IMAGE_SERVER])
        yield* release
        // Attached to while its server runs: the devbox is asked where the workspace is, nothing is uploaded again.
        const attached = yield* buildRuntime(
          Layer.fresh(RunloopRuntime.attach("rl-upload", standInOptions(s, { blueprint: "node-only" })))
        )
        assert.strictEqual(attached.rt.info.workspace, "/home/user/workspace")
        assert.strictEqual((yield* attached.rt.runCommand("pwd")).content, "/home/user/workspace")
        assert.strictEqual(
          s.requests.filter((r) => r.path === `/v1/devboxes/${devbox.id}/upload_file`).length,
          uploads.length
        )
        yield* attached.release
        assertAllShutDown(s)
      }),
    180_000
  )

  it.live("uploadPayload: false refuses a blueprint without the payload", () =>
    Effect.gen(function*() {
      const s = standIn()
      const error = yield* startFailure(runloopLayer(s, { blueprint: "node-only", uploadPayload: false }))
      assert.strictEqual(
        error.message,
        "The Runloop blueprint node-only has no action-server payload (/opt/effect-sandbox/payload/server.mjs) and " +
          "uploadPayload is off: make the blueprint from the runtime image (docs/runtimes/runloop.md, \"Making the blueprint\")."
      )
      assertAllShutDown(s)
    }), 120_000)

  it.live(
    "an output stream that fails (an error answer, a cut connection): the wait polls /alive and the start reaches READY",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const faults = [{ kind: "status", status: 500, message: "stream broke" }, { kind: "cut" }] as const
        for (const [i, fault] of faults.entries()) {
          s.faults.inject({ method: "GET", path: /\/stream_stdout_updates$/ }, fault)
          const { rt, release } = yield* buildRuntime(runloopLayer(s, { sessionId: `rl-stream-${i}` }))
          const devbox = devboxOf(s, `rl-stream-${i}`)
          assert.deepStrictEqual(s.faults.hits.at(-1), {
            method: "GET",
            path: requestsOf(s, devbox, "/stream_stdout_updates")[0]!.path,
            fault: fault.kind
          })
          assertImageServerStarted(s, devbox)
          assert.isAtLeast(aliveAttempts(s, devbox), 1)
          assert.strictEqual((yield* rt.runCommand("echo polled")).content, "polled")
          yield* release
        }
        assertAllShutDown(s)
      }),
    // Well inside the server's 90 s `/alive` budget: a stream that hangs must not hold the start that long.
    30_000
  )

  it.live(
    "execution output streams as Runloop serves them, read through the SDK: the output from an offset, chunks with their end offsets, the end with the execution; unknown ids and a bad offset refused",
    () =>
      Effect.promise(async () => {
        const s = standIn()
        const { devboxes } = new Runloop({ bearerToken: s.apiKey, baseURL: s.baseUrl, maxRetries: 0 })
        const { id } = await devboxes.create({ blueprint_name: "base" })
        try {
          await devboxes.awaitRunning(id)
          const { execution_id } = await devboxes.executions.executeAsync(id, {
            command: "printf 'one\\n'; printf 'tw\\303\\270\\n' >&2; sleep 0.2; printf 'three\\n'; sh -c 'exit 3'",
            shell_name: "streamed"
          })
          const read = async (stream: ReturnType<typeof devboxes.executions.streamStdoutUpdates>) => {
            const chunks = []
            for await (const chunk of await stream) chunks.push(chunk)
            return { output: chunks.map((c) => c.output).join(""), offset: chunks.at(-1)?.offset }
          }
          // Read while it runs; each ends once the execution completed, its whole output sent.
          const [stdout, stderr] = await Promise.all([
            read(devboxes.executions.streamStdoutUpdates(id, execution_id)),
            read(devboxes.executions.streamStderrUpdates(id, execution_id))
          ])
          assert.deepStrictEqual(stdout, { output: "one\nthree\n", offset: 10 })
          // Offsets count bytes.
          assert.deepStrictEqual(stderr, { output: "twø\n", offset: 5 })
          const done = await devboxes.executions.retrieve(id, execution_id)
          assert.deepStrictEqual([done.status, done.exit_status], ["completed", 3])
          assert.deepStrictEqual(
            await read(devboxes.executions.streamStdoutUpdates(id, execution_id, { offset: "4" })),
            {
              output: "three\n",
              offset: 10
            }
          )
          assert.strictEqual(
            await streamRefusal(devboxes.executions.streamStdoutUpdates(id, "exe_none")),
            "404 Execution exe_none not found"
          )
          assert.strictEqual(
            await streamRefusal(devboxes.executions.streamStdoutUpdates("dbx_none", execution_id)),
            "404 Devbox dbx_none not found"
          )
          assert.strictEqual(
            await streamRefusal(devboxes.executions.streamStdoutUpdates(id, execution_id, { offset: "-1" })),
            "400 Invalid offset -1: a byte offset, a whole number"
          )
        } finally {
          await devboxes.shutdown(id)
        }
      }),
    60_000
  )

  it.live("bad options are refused before anything is sent", () =>
    Effect.gen(function*() {
      const s = standIn()
      const before = s.requests.length
      const refused = (options: RunloopRuntimeOptions) =>
        startFailure(runloopLayer(s, options)).pipe(Effect.map((error) => [error._tag, error.message]))
      assert.deepStrictEqual(
        yield* refused({ cpus: 3, memoryMiB: 4096 }),
        refusal("cpus: 3: Runloop takes 0.5, 1, or an even number up to 16.")
      )
      assert.deepStrictEqual(
        yield* refused({ cpus: 2, memoryMiB: 32768 }),
        refusal("2 CPU with 32 GiB: Runloop wants 2 to 8 GiB per CPU.")
      )
      assert.deepStrictEqual(
        yield* refused({ cpus: 2, memoryMiB: 3000 }),
        refusal("memoryMiB: 3000: Runloop takes 1 GiB, or an even number of GiB up to 64.")
      )
      assert.deepStrictEqual(
        yield* refused({ cpus: 2 }),
        refusal("cpus and memoryMiB go together (Runloop's custom size).")
      )
      assert.deepStrictEqual(
        yield* refused({ size: "SMALL", cpus: 1, memoryMiB: 2048 }),
        refusal("size, or cpus and memoryMiB: not both.")
      )
      assert.deepStrictEqual(
        yield* refused({ size: "SMALL", diskGiB: 8 }),
        refusal("diskGiB goes with cpus and memoryMiB (a custom size).")
      )
      assert.deepStrictEqual(
        yield* refused({ idleTimeout: "3 days" }),
        refusal(
          "idleTimeout: 259200 s: from 1 minute (the owner renews it every third of it) to 48 hours (Runloop's longest keep-alive)."
        )
      )
      assert.deepStrictEqual(
        yield* refused({ lifetime: "1 hour" }),
        refusal("lifetime: Runloop ends a devbox by its idle policy (idleTimeout).")
      )
      const workspace = yield* startFailure(runloopLayer(s, { workspace: "/tmp" } as never))
      assert.strictEqual(workspace._tag, "InvalidOptionsError")
      assert.strictEqual(s.requests.length, before)
    }), 60_000)
})

describeDocker("RunloopRuntime start, output streams idle past Runloop's hold (stand-in)", () => {
  const standIn = useStandIn({ holdMs: 25 })

  it.live(
    "the SDK streams again from the last chunk's offset, and the listening line is still heard: READY at the first /alive",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const { release } = yield* buildRuntime(runloopLayer(s, { sessionId: "rl-idle-stream" }))
        const devbox = devboxOf(s, "rl-idle-stream")
        assertImageServerStarted(s, devbox)
        const offsets = requestsOf(s, devbox, "/stream_stdout_updates").map((r) =>
          Number(new URLSearchParams(r.query).get("offset"))
        )
        // The server's boot outlasts the hold: asked again past the marker line, from its end.
        assert.include(offsets, Buffer.byteLength(`${IMAGE_SERVER_FOUND}\n`))
        assert.deepStrictEqual(offsets, [...offsets].sort((a, b) => a - b))
        assertReadyAtFirstAlive(aliveTimes(s, devbox))
        yield* release
        assertAllShutDown(s)
      }),
    60_000
  )
})
