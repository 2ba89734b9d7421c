/**
 * DaytonaRuntime's start through the SDK against the stand-in: what it asks Daytona for (the
 * snapshot, the owner tags as labels, the auto-stop, auto-delete and TTL intervals, as the stand-in
 * recorded the requests), where the session key goes, the preview token; the snapshot's server
 * started without a probe and heard listening in its followed log (a follow that fails still
 * reaches READY by polling), the stand-in's follow as the daemon's; and the start failures with
 * their messages and reasons (a refused key, the quota, a rate limit retried then given up on, a
 * missing snapshot, a snapshot without our server, a server that dies at start, options Daytona
 * cannot honour, no credentials), none of which leaves a sandbox behind.
 */
import { Daytona } from "@daytonaio/sdk"
import { assert, it } from "@effect/vitest"
import { Effect, Redacted, Schedule } from "effect"
import { hostname } from "node:os"
import { DaytonaRuntime, type DaytonaRuntimeOptions } from "../../../src/daytona.ts"
import { IMAGE_SERVER_FOUND } from "../../../src/hosted/serverFiles.ts"
import {
  type InvalidOptionsError,
  type ProviderReason,
  type RuntimeStartError,
  SandboxConfig
} from "../../../src/index.ts"
import { PROBE } from "../../../src/serverStart/serverProbe.ts"
import { buildRuntime, startError } from "../../docker/helpers.ts"
import { describeDocker } from "../../docker/infra.ts"
import { baseImage } from "../../docker/infra.ts"
import { assertReadyAtFirstAlive } from "../aliveAttempts.ts"
import { keyCheck } from "../keyCheck.ts"
import { assertAllDeleted, CREATE, daytonaLayer, until, useStandIn } from "./infra.ts"
import type { DaytonaStandIn, RecordedRequest } from "./server.ts"
import { dyingServerImage, stockNodeImage } from "./snapshot.ts"

const creates = (standIn: DaytonaStandIn) =>
  standIn.requests.filter((r) => r.method === "POST" && r.path === "/sandbox")

/** The creates a fault answered (they never reach the API, so `creates` does not count them). */
const refusedCreates = (standIn: DaytonaStandIn) =>
  standIn.faults.hits.filter((hit) => hit.method === "POST" && hit.path === "/api/sandbox").length

/** Whether the snapshot was probed for our server (serverFiles.ts) among these requests. */
const probed = (requests: ReadonlyArray<RecordedRequest>) =>
  requests.some((r) =>
    r.path === "/toolbox/{id}/process/execute" && (r.body as { command: string }).command.startsWith(PROBE)
  )

/** The start's error, as the typed error it must be. */
const startFailure = (layer: Parameters<typeof startError>[0]) =>
  startError(layer).pipe(Effect.map((error) => error as RuntimeStartError | InvalidOptionsError))

/** Daytona's refusal, as data: a start error of reason "provider" carrying Daytona's reason and status. */
const assertRefused = (error: RuntimeStartError | InvalidOptionsError, reason: ProviderReason, status: number) => {
  assert.isTrue(error._tag === "RuntimeStartError" && error.reason === "provider")
  const provider = (error as RuntimeStartError).provider!
  assert.deepStrictEqual([provider.provider, provider.reason, provider.status], ["Daytona", reason, status])
}

describeDocker("DaytonaRuntime start (stand-in)", () => {
  const standIn = useStandIn(async () => ({
    "stock-debian": baseImage(),
    "stock-node": await Effect.runPromise(stockNodeImage(baseImage())),
    "dying-server": await Effect.runPromise(dyingServerImage(baseImage()))
  }))

  it.live(
    "creates from the snapshot with the owner tags and Daytona-side cleanup; the key never sits in the environment; no VS Code unless asked",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const before = creates(s).length
        const { rt, release } = yield* buildRuntime(
          daytonaLayer(s, {
            sessionId: "dtn-start-labels",
            idleTimeout: "30 minutes",
            autoDeleteAfter: "5 minutes",
            lifetime: "2 hours",
            appPorts: [8080]
          })
        )
        const body = creates(s)[before]!.body as Record<string, unknown>
        assert.strictEqual(body["snapshot"], "effect-sandbox-runtime")
        assert.strictEqual(body["autoStopInterval"], 30)
        assert.strictEqual(body["autoDeleteInterval"], 5)
        assert.strictEqual(body["ttlMinutes"], 120)
        const labels = body["labels"] as Record<string, string>
        assert.strictEqual(labels["effect-sandbox.managed"], "true")
        assert.strictEqual(labels["effect-sandbox.session"], "dtn-start-labels")
        assert.strictEqual(labels["effect-sandbox.owner.pid"], String(process.pid))
        assert.strictEqual(labels["effect-sandbox.owner.host"], hostname())
        assert.strictEqual(labels["effect-sandbox.keep-alive"], "false")
        const key = labels["effect-sandbox.session-key"]!
        const env = body["env"] as Record<string, string>
        assert.notProperty(env, "EFFECT_SANDBOX_SESSION_API_KEY_FILE")
        assert.isFalse(Object.values(env).some((v) => v.includes(key)))
        assert.notProperty(env, "VSCODE_PORT")
        // The server got the key's digest, never the key: no process environment, no file holds it.
        const check = yield* rt.runCommand(keyCheck(key))
        assert.strictEqual(check.content, "digest=yes\nkey=0")
        const sandbox = [...s.sandboxes.byId.values()].find((x) =>
          x.labels["effect-sandbox.session"] === "dtn-start-labels"
        )!
        assert.strictEqual(rt.info.kind, "daytona")
        assert.strictEqual(rt.info.urls["app-8080"], `${s.apiUrl.replace(/\/api$/, "")}/preview/8080-${sandbox.id}`)
        // The preview link answers only with its token (which the runtime sends on every request).
        const bare = yield* Effect.promise(() => fetch(`${rt.info.urls["actionServer"]}/alive`))
        assert.strictEqual(bare.status, 401)
        assert.isFalse(Object.values(rt.info.urls).some((url) => url.includes(sandbox.previewToken)))
        // Without `vscode`: no IDE link asked of Daytona, none reported.
        assert.isUndefined(rt.info.urls["vscode"])
        assert.deepStrictEqual([...s.signedPreviews.byToken.values()].filter((l) => l.sandboxId === sandbox.id), [])
        yield* release
        assert.strictEqual(sandbox.state, "destroyed")
      }),
    120_000
  )

  it.live("a refused API key: Daytona's message and what to check, reason unauthorized", () =>
    Effect.gen(function*() {
      const s = standIn()
      const error = yield* startFailure(daytonaLayer(s, { apiKey: Redacted.make("dtn_wrong") }))
      assert.strictEqual(
        error.message,
        "Daytona could not create a sandbox from snapshot effect-sandbox-runtime: Invalid API key " +
          "(Daytona refused the API key: check DAYTONA_API_KEY or the `apiKey` option)"
      )
      assertRefused(error, "unauthorized", 401)
      assertAllDeleted(s)
    }), 60_000)

  it.live("no API key at all is an InvalidOptionsError naming DAYTONA_API_KEY, nothing asked of Daytona", () =>
    Effect.gen(function*() {
      const s = standIn()
      const before = s.requests.length
      const saved = process.env["DAYTONA_API_KEY"]
      delete process.env["DAYTONA_API_KEY"]
      const error = yield* startFailure(DaytonaRuntime.layer({ apiUrl: s.apiUrl })).pipe(
        Effect.ensuring(Effect.sync(() => saved === undefined || (process.env["DAYTONA_API_KEY"] = saved)))
      )
      assert.strictEqual(error._tag, "InvalidOptionsError")
      assert.strictEqual(
        error.message,
        "DaytonaRuntime options: no apiKey given and DAYTONA_API_KEY is not set (a Daytona API key)."
      )
      assert.strictEqual(s.requests.length, before)
    }))

  it.live("a missing snapshot is Daytona's 404, reason image-missing", () =>
    Effect.gen(function*() {
      const s = standIn()
      const error = yield* startFailure(daytonaLayer(s, { snapshot: "no-such-snapshot" }))
      assert.strictEqual(
        error.message,
        "Daytona could not create a sandbox from snapshot no-such-snapshot: Snapshot no-such-snapshot not found"
      )
      assertRefused(error, "image-missing", 404)
      assertAllDeleted(s)
    }), 60_000)

  it.live("the organisation's quota: Daytona's message, nothing created", () =>
    Effect.gen(function*() {
      const s = standIn()
      s.faults.inject(CREATE, { kind: "status", status: 403, message: "Total CPU limit exceeded. Maximum allowed: 4" })
      const error = yield* startFailure(daytonaLayer(s))
      assert.strictEqual(
        error.message,
        "Daytona could not create a sandbox from snapshot effect-sandbox-runtime: Total CPU limit exceeded. " +
          "Maximum allowed: 4 (the organisation's quota refuses it: stop or delete sandboxes, or raise the limits)"
      )
      assertRefused(error, "quota", 403)
      assertAllDeleted(s)
    }), 60_000)

  it.live("a rate limit is retried with backoff until Daytona accepts", () =>
    Effect.gen(function*() {
      const s = standIn()
      const before = creates(s).length + refusedCreates(s)
      s.faults.inject(CREATE, { kind: "status", status: 429, message: "ThrottlerException: Too Many Requests" }, 2)
      const { rt, release } = yield* buildRuntime(daytonaLayer(s))
      assert.strictEqual(creates(s).length + refusedCreates(s) - before, 3)
      assert.strictEqual((yield* rt.runCommand("echo after-429")).content, "after-429")
      yield* release
      assertAllDeleted(s)
    }), 120_000)

  it.live(
    "a rate limit outlasting providerRetry fails with Daytona's text, reason rate-limited",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const before = creates(s).length + refusedCreates(s)
        s.faults.inject(CREATE, { kind: "status", status: 429, message: "ThrottlerException: Too Many Requests" }, 2)
        const quick = Schedule.spaced("10 millis").pipe(Schedule.upTo({ times: 1 }))
        const error = yield* startFailure(daytonaLayer(s, { providerRetry: quick }))
        assert.strictEqual(
          error.message,
          "Daytona could not create a sandbox from snapshot effect-sandbox-runtime: ThrottlerException: Too Many " +
            "Requests (Daytona's rate limit: still refused after retrying with backoff)"
        )
        assertRefused(error, "rate-limited", 429)
        assert.strictEqual(creates(s).length + refusedCreates(s) - before, 2)
        assertAllDeleted(s)
      }),
    60_000
  )

  it.live(
    "a server that dies at start fails the start with its exit code and output, and the sandbox is deleted",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const error = (yield* startFailure(daytonaLayer(s, { snapshot: "dying-server" }))) as RuntimeStartError
        const sandbox = [...s.sandboxes.byId.values()].filter((x) => x.snapshot === "dying-server").at(-1)!
        assert.strictEqual(error.reason, "server-exited")
        assert.strictEqual(error.exitCode, 3)
        assert.strictEqual(error.output?.trim(), "effect-sandbox test: the server gives up at start")
        assert.strictEqual(
          error.message,
          `The action server in Daytona sandbox ${sandbox.id} exited with code 3 before it answered. ` +
            "Its last output:\neffect-sandbox test: the server gives up at start"
        )
        assertAllDeleted(s)
      }),
    120_000
  )

  it.live(
    "a snapshot without our server, with uploadPayload off, names what it lacks, and the sandbox is deleted",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const error = yield* startFailure(
          daytonaLayer(s, { snapshot: "stock-debian", uploadPayload: false, user: "root", userId: 0 })
        )
        assert.strictEqual(
          error.message,
          "The Daytona snapshot stock-debian has no action-server payload (/opt/effect-sandbox/payload/server.mjs) and " +
            "uploadPayload is off: make the snapshot from the runtime image (docs/runtimes/daytona.md, \"Making the snapshot\")."
        )
        assertAllDeleted(s)
      }),
    120_000
  )

  it.live(
    "a stock snapshot with Node gets the payload uploaded and runs it, in ~/workspace, where an attach finds it",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const before = s.requests.length
        const keep = new SandboxConfig({ keepRuntimeAlive: true })
        const { rt, release } = yield* buildRuntime(
          daytonaLayer(s, { snapshot: "stock-node", sessionId: "dtn-upload", sandbox: keep })
        )
        assert.strictEqual(rt.info.workspace, "/home/openhands/workspace")
        // The image's server tried first (it exited NO_IMAGE_SERVER), then the probe, then the uploaded server.
        const started = s.requests.slice(before).filter((r) => r.path.endsWith("/exec"))
        assert.deepStrictEqual(
          started.map((r) => (r.body as { command: string }).command.includes(IMAGE_SERVER_FOUND)),
          [true, false]
        )
        assert.isTrue(probed(s.requests.slice(before)))
        const ran = yield* rt.runCommand(
          "pwd; test -e /opt/effect-sandbox/payload; echo $?; ls ~/.effect-sandbox/payload/server.mjs"
        )
        assert.strictEqual(
          ran.content,
          "/home/openhands/workspace\n1\n/home/openhands/.effect-sandbox/payload/server.mjs"
        )
        yield* release
        // Attached to while its server runs: the sandbox is asked where the workspace is, nothing is uploaded again.
        const uploads = () => s.requests.filter((r) => r.path.endsWith("/files/bulk-upload")).length
        const uploaded = uploads()
        assert.isAbove(uploaded, 0)
        const attached = yield* buildRuntime(daytonaLayer(s, { snapshot: "stock-node", sessionId: "dtn-upload" }))
        assert.strictEqual(attached.rt.info.workspace, "/home/openhands/workspace")
        assert.strictEqual((yield* attached.rt.runCommand("pwd")).content, "/home/openhands/workspace")
        assert.strictEqual(uploads(), uploaded)
        yield* attached.release
        assertAllDeleted(s)
      }),
    120_000
  )

  it.live("a snapshot with neither our server nor Node says what it lacks", () =>
    Effect.gen(function*() {
      const s = standIn()
      const before = s.requests.length
      const error = yield* startFailure(daytonaLayer(s, { snapshot: "stock-debian", user: "root", userId: 0 }))
      assert.isTrue(probed(s.requests.slice(before)))
      assert.strictEqual(
        error.message,
        "The Daytona snapshot stock-debian has no action-server payload (/opt/effect-sandbox/payload/server.mjs) and no " +
          "Node.js on its PATH to run an uploaded one: make the snapshot from the runtime image " +
          "(docs/runtimes/daytona.md, \"Making the snapshot\"), or use a snapshot with Node 22.19 or newer."
      )
      assertAllDeleted(s)
    }), 120_000)

  it.live(
    "the snapshot's server starts at once, no probe before it; its listening line is heard in the followed log, so the first /alive answers",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const [before, previews] = [s.requests.length, s.previews.length]
        const { rt, release } = yield* buildRuntime(daytonaLayer(s, { sessionId: "dtn-start-heard" }))
        const sandbox = [...s.sandboxes.byId.values()].find((x) =>
          x.labels["effect-sandbox.session"] === "dtn-start-heard"
        )!
        const alive = s.previews.slice(previews).filter(({ path }) => path === `/preview/8000-${sandbox.id}/alive`)
        const asked = s.requests.slice(before)
        assert.isFalse(asked.some((r) => r.path === "/toolbox/{id}/process/execute"))
        assert.strictEqual(asked.filter((r) => r.path.endsWith("/exec")).length, 1)
        assert.strictEqual(asked.filter((r) => r.path.endsWith("/logs?follow=true")).length, 1)
        assertReadyAtFirstAlive(alive.map(({ at }) => at))
        // The follow is closed once the line came, though the server goes on (and prints nothing more).
        yield* until(() => s.following() === 0)
        assert.strictEqual(rt.info.workspace, "/workspace")
        assert.strictEqual((yield* rt.runCommand("pwd")).content, "/workspace")
        yield* release
        assertAllDeleted(s)
      }),
    60_000
  )

  it.live(
    "a follow of the server's log that fails (cut, or refused) still reaches READY by polling /alive",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const follow = { method: "GET", path: /\/logs$/ }
        for (
          const fault of [{ kind: "cut" as const }, { kind: "status" as const, status: 502, message: "Bad Gateway" }]
        ) {
          const hits = s.faults.hits.length
          s.faults.inject(follow, fault)
          const { rt, release } = yield* buildRuntime(daytonaLayer(s))
          assert.deepStrictEqual(s.faults.hits.slice(hits).map((hit) => hit.fault), [fault.kind])
          assert.strictEqual((yield* rt.runCommand("echo polled")).content, "polled")
          yield* release
        }
        assertAllDeleted(s)
      }),
    60_000
  )

  it.live(
    "the stand-in's followed logs are the daemon's: 404s before the upgrade, each stream demultiplexed, the end after the exit",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const { release } = yield* buildRuntime(daytonaLayer(s, { sessionId: "dtn-start-follow" }))
        const made = [...s.sandboxes.byId.values()].find((x) =>
          x.labels["effect-sandbox.session"] === "dtn-start-follow"
        )!
        const sandbox = yield* Effect.promise(() => new Daytona({ apiKey: s.apiKey, apiUrl: s.apiUrl }).get(made.id))
        const refused = (session: string, command: string) =>
          Effect.flip(Effect.tryPromise(() =>
            sandbox.process.getSessionCommandLogs(session, command, () => undefined, () => undefined)
          )).pipe(Effect.map((error) =>
            (error.cause as { readonly message: string }).message
          ))
        // The SDK rejects with the socket's error event: the daemon's answer was not an upgrade.
        assert.strictEqual(yield* refused("no-such-session", "x"), "Unexpected server response: 404")
        yield* Effect.promise(() => sandbox.process.createSession("follow"))
        assert.strictEqual(yield* refused("follow", "no-such-command"), "Unexpected server response: 404")
        const { cmdId } = yield* Effect.promise(() =>
          sandbox.process.executeSessionCommand("follow", {
            command: "echo out; echo err >&2; (exit 4)",
            runAsync: true
          })
        )
        const [stdout, stderr] = [[] as Array<string>, [] as Array<string>]
        yield* Effect.promise(() =>
          sandbox.process.getSessionCommandLogs("follow", cmdId, (c) => stdout.push(c), (c) => stderr.push(c))
        )
        assert.deepStrictEqual([stdout.join(""), stderr.join("")], ["out\n", "err\n"])
        assert.strictEqual(
          (yield* Effect.promise(() => sandbox.process.getSessionCommand("follow", cmdId))).exitCode,
          4
        )
        yield* release
        assertAllDeleted(s)
      }),
    60_000
  )

  it.live("a host workspace is refused before anything is created", () =>
    Effect.gen(function*() {
      const s = standIn()
      const before = s.requests.length
      // Not in the options' type (a JavaScript caller, or the CLI's shared options, may still pass it).
      const error = yield* startFailure(daytonaLayer(s, { workspace: "/tmp" } as DaytonaRuntimeOptions))
      assert.strictEqual(error._tag, "InvalidOptionsError")
      assert.strictEqual(s.requests.length, before)
    }), 60_000)

  it.live("options Daytona cannot honour are InvalidOptionsErrors, before anything is asked", () =>
    Effect.gen(function*() {
      const s = standIn()
      const before = s.requests.length
      const refusals: ReadonlyArray<readonly [DaytonaRuntimeOptions, string]> = [
        [{ cpus: 2 }, "cpus: a Daytona sandbox is sized by its snapshot."],
        [{ idleTimeout: "90 seconds" }, "idleTimeout must be whole minutes (as Daytona counts it)."],
        [{ autoDeleteAfter: "1.5 minutes" }, "autoDeleteAfter must be whole minutes (as Daytona counts it)."],
        [{ lifetime: "30 seconds" }, "lifetime must be whole minutes (as Daytona counts it)."]
      ]
      for (const [options, message] of refusals) {
        const error = yield* startFailure(daytonaLayer(s, options))
        assert.strictEqual(error._tag, "InvalidOptionsError")
        assert.strictEqual(error.message, `DaytonaRuntime options: ${message}`)
      }
      assert.strictEqual(s.requests.length, before)
    }))
})
