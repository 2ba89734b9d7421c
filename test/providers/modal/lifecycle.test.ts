/**
 * ModalRuntime's sandbox through the real `modal` SDK against the stand-in: the docs' recipe for the
 * image (built from a registry reference, published), what the create call
 * carried (timeouts, resources, ports, tags, the key's digest and never the key), the tunnels
 * (`info.urls` over TLS), the owner's heartbeat keeping an idle timeout at bay, a sandbox ended
 * elsewhere shown as a disconnect, attach by session id (`layer` and `attach`), and the reaper of
 * dead owners' sandboxes.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Fiber, Option, Schedule, Stream } from "effect"
import { ModalClient } from "modal"
import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import { hostname } from "node:os"
import { RuntimeStartError, SandboxConfig } from "../../../src/index.ts"
import { ModalRuntime, type ModalRuntimeOptions } from "../../../src/modal.ts"
import { remember } from "../../../src/providers/modal/ledger.ts"
import { expectDisconnected } from "../../disconnected.ts"
import { buildRuntime, startError } from "../../docker/helpers.ts"
import { describeDocker } from "../../docker/infra.ts"
import { eventually } from "../../eventually.ts"
import { runtimeImage } from "../e2b/fixture.ts"
import { docker } from "./docker.ts"
import { standinOptions, TOKEN_ID, TOKEN_SECRET, useModalStandin } from "./fixture.ts"
import { STATUS } from "./sandboxes.ts"

const KEY_TAG = "effect-sandbox.session-key"

/** The tags a ModalRuntime of process `pid` on this host gives its sandbox. */
const ownedBy = (pid: number, keepAlive: boolean) => ({
  "effect-sandbox.managed": "true",
  "effect-sandbox.session": `reaper-${pid}-${keepAlive}`,
  "effect-sandbox.owner.host": hostname(),
  "effect-sandbox.owner.pid": String(pid),
  "effect-sandbox.keep-alive": String(keepAlive),
  [KEY_TAG]: "k"
})

describeDocker("ModalRuntime lifecycle (stand-in)", () => {
  const standinOf = useModalStandin()

  const latest = () => [...standinOf().sandboxes.values()].at(-1)!
  const layer = (options: ModalRuntimeOptions = {}) => ModalRuntime.layer(standinOptions(standinOf(), options))
  const noContainers = Effect.promise(() => standinOf().containers()).pipe(
    Effect.map((left) => assert.deepStrictEqual(left, []))
  )

  it.live(
    "the create call carries the timeouts, resources, ports (no VS Code port without `vscode`) and tags; the sandbox gets the key's digest only",
    () =>
      Effect.gen(function*() {
        const { rt, release } = yield* buildRuntime(layer({
          lifetime: "10 minutes",
          idleTimeout: "30 seconds",
          cpus: 0.5,
          memoryMiB: 1024,
          appPorts: [9000],
          env: { GREETING: "hello" }
        }))
        const sandbox = latest()
        const { definition, tags } = sandbox
        assert.strictEqual(definition.timeoutSecs, 600)
        assert.strictEqual(definition.idleTimeoutSecs, 30)
        assert.deepStrictEqual(
          [definition.resources?.milliCpu, definition.resources?.memoryMb],
          [500, 1024]
        )
        assert.deepStrictEqual(definition.openPorts?.ports.map((p) => [p.port, p.unencrypted]), [[8000, false], [
          9000,
          false
        ]])
        const key = tags[KEY_TAG]!
        assert.isAtLeast(key.length, 32)
        assert.deepStrictEqual({ ...tags, [KEY_TAG]: "" }, {
          "effect-sandbox.managed": "true",
          "effect-sandbox.session": rt.info.id,
          "effect-sandbox.owner.host": hostname(),
          "effect-sandbox.owner.pid": String(process.pid),
          "effect-sandbox.keep-alive": "false",
          [KEY_TAG]: ""
        })
        const inspected = yield* Effect.promise(() => docker.getContainer(sandbox.container).inspect())
        assert.include(
          inspected.Config.Env,
          `EFFECT_SANDBOX_SESSION_API_KEY_SHA256=${createHash("sha256").update(key).digest("hex")}`
        )
        assert.notInclude([...inspected.Config.Env, ...inspected.Config.Cmd].join("\n"), key)
        assert.isFalse(inspected.Config.Env.some((entry) => entry.startsWith("VSCODE_PORT=")))
        assert.notProperty(rt.info.urls, "vscode")
        assert.deepStrictEqual([inspected.HostConfig.NanoCpus, inspected.HostConfig.Memory], [5e8, 1024 * 1024 * 1024])
        const obs = yield* rt.runCommand(
          `echo $GREETING; whoami; pwd; grep -l -F -e '${key}' /proc/[0-9]*/environ | wc -l`
        )
        assert.strictEqual(obs.content.trim(), "hello\nroot\n/workspace\n0")
        yield* release
        assert.strictEqual(sandbox.result?.status, STATUS.terminated)
        yield* noContainers
      }),
    120_000
  )

  it.live(
    "info.urls are the sandbox's TLS tunnels, and an app port answers through its own",
    () =>
      Effect.gen(function*() {
        const started = Date.now()
        const { rt, release } = yield* buildRuntime(layer({ appPorts: [9000] }))
        yield* Effect.logInfo(`ModalRuntime on the stand-in ready in ${Date.now() - started} ms`)
        const [server, app] = latest().tunnels
        assert.strictEqual(rt.info.urls["actionServer"], `https://127.0.0.1:${server!.port}`)
        assert.strictEqual(rt.info.urls["app-9000"], `https://127.0.0.1:${app!.port}`)
        yield* rt.runCommand(
          `nohup /opt/effect-sandbox/bin/node -e "require('http').createServer((q, s) => s.end('app-ok ' + q.url))` +
            `.listen(9000, '0.0.0.0')" > /dev/null 2>&1 &`
        )
        const body = yield* Effect.promise(async () => {
          for (let attempt = 0; attempt < 100; attempt++) {
            const answer = await fetch(`${rt.info.urls["app-9000"]}/hello`).catch(() => undefined)
            if (answer?.status === 200) return answer.text()
            await new Promise((resolve) => setTimeout(resolve, 100))
          }
          return "no answer"
        })
        assert.strictEqual(body, "app-ok /hello")
        yield* release
        yield* noContainers
      }),
    120_000
  )

  it.live(
    "the docs' recipe (a registry image built by Modal, then published) makes an image ModalRuntime starts from",
    () =>
      Effect.gen(function*() {
        const reference = yield* Effect.promise(() => runtimeImage())
        yield* Effect.promise(async () => {
          const client = modalClient()
          const app = await client.apps.fromName("effect-sandbox", { createIfMissing: true })
          const built = await client.images.fromRegistry(reference).build(app)
          await built.publish("recipe-runtime")
        })
        const { rt, release } = yield* buildRuntime(layer({ image: "recipe-runtime" }))
        assert.strictEqual((yield* rt.runCommand("echo from-recipe")).content.trim(), "from-recipe")
        yield* release
        yield* noContainers
      }),
    120_000
  )

  it.live(
    "the owner's heartbeat keeps a sandbox with a 3 s idle timeout alive; one nobody uses ends (an orphan's fate)",
    () =>
      Effect.gen(function*() {
        const { rt, release } = yield* buildRuntime(layer({ idleTimeout: "3 seconds" }))
        const owned = latest()
        // The same idle timeout on a sandbox no owner keeps busy.
        const orphan = yield* sleeper({ idleTimeoutMs: 3000 })
        yield* Effect.sleep("7 seconds")
        assert.strictEqual(standinOf().sandboxes.get(orphan.sandboxId)?.result?.status, STATUS.idleTimeout)
        assert.strictEqual(owned.result, undefined)
        assert.strictEqual((yield* rt.runCommand("echo still")).content.trim(), "still")
        yield* release
        yield* noContainers
      }),
    120_000
  )

  it.live("a sandbox terminated elsewhere shows as a disconnect naming it", () =>
    Effect.gen(function*() {
      const { rt, release } = yield* buildRuntime(layer())
      const sandbox = latest()
      const client = modalClient()
      yield* Effect.promise(async () => (await client.sandboxes.fromId(sandbox.id)).terminate())
      yield* expectDisconnected(rt, `Modal sandbox ${sandbox.id} ended: it was terminated`)
      yield* release
      yield* noContainers
    }), 120_000)

  it.live(
    "a session kept alive is attached to by its id: same sandbox, same files; released, it is terminated",
    () =>
      Effect.gen(function*() {
        const sessionId = `modal-attach-${process.pid}`
        const kept = new SandboxConfig({ keepRuntimeAlive: true })
        const first = yield* buildRuntime(layer({ sessionId, sandbox: kept }))
        yield* first.rt.runCommand("echo kept > /workspace/note")
        yield* first.release
        const sandbox = latest()
        assert.strictEqual(sandbox.result, undefined)
        // Kept alive: no idle timeout (nothing would keep it busy once its owner is gone).
        assert.strictEqual(sandbox.definition.idleTimeoutSecs ?? undefined, undefined)
        const creates = standinOf().calls.filter((c) => c.method === "SandboxCreateV2").length
        // `attach`, kept alive again: the same sandbox, left running.
        const attached = yield* buildRuntime(
          ModalRuntime.attach(sessionId, standinOptions(standinOf(), { sandbox: kept }))
        )
        yield* attached.rt.runCommand("echo again >> /workspace/note")
        yield* attached.release
        assert.strictEqual(sandbox.result, undefined)
        const second = yield* buildRuntime(layer({ sessionId }))
        assert.strictEqual(standinOf().calls.filter((c) => c.method === "SandboxCreateV2").length, creates)
        assert.strictEqual((yield* second.rt.runCommand("cat /workspace/note")).content.trim(), "kept\nagain")
        assert.strictEqual(second.rt.info.id, sessionId)
        yield* second.release
        assert.strictEqual(sandbox.result?.status, STATUS.terminated)
        yield* noContainers
      }),
    120_000
  )

  it.live("attach to a session without a sandbox is a start error, and makes none", () =>
    Effect.gen(function*() {
      const creates = standinOf().calls.filter((c) => c.method === "SandboxCreateV2").length
      const error = yield* startError(ModalRuntime.attach("modal-no-such-session", standinOptions(standinOf())))
      assert.instanceOf(error, RuntimeStartError)
      const { message, reason } = error as RuntimeStartError
      assert.deepStrictEqual([message, reason], [
        "Modal has no sandbox of session modal-no-such-session to attach to.",
        "other"
      ])
      assert.strictEqual(standinOf().calls.filter((c) => c.method === "SandboxCreateV2").length, creates)
      yield* noContainers
    }))

  it.live(
    "the reaper terminates the sandboxes of dead owners on this host, found in this host's record while Modal's list answers none of them, and leaves the others",
    () =>
      Effect.gen(function*() {
        const deadPid = Number(
          spawnSync(process.execPath, ["-e", "console.log(process.pid)"], { encoding: "utf8" }).stdout
        )
        const made = yield* Effect.all([
          sleeper({ tags: ownedBy(deadPid, false) }),
          sleeper({ tags: ownedBy(process.pid, false) }),
          sleeper({ tags: ownedBy(deadPid, true) })
        ])
        const [orphan, live, keptAlive] = made.map((sb) => standinOf().sandboxes.get(sb.sandboxId)!)
        // As their owners' runtimes on this host recorded them when they made them.
        yield* Effect.promise(() => Promise.all(made.map((sb) => remember(orphan!.appId, sb.sandboxId))))
        assert.isFalse(standinOf().listsV2)
        const { release } = yield* buildRuntime(layer())
        // The reaper's first pass comes once the layer's first start has ended (hosted/reaper.ts).
        yield* eventually("the dead owner's sandbox terminated", () =>
          orphan!.result?.status === STATUS.terminated, 30_000)
        assert.deepStrictEqual([live!.result, keptAlive!.result], [undefined, undefined])
        yield* release
        yield* Effect.promise(() =>
          Promise.all(made.map((sb) =>
            sb.terminate()
          ))
        )
        yield* noContainers
      }),
    120_000
  )

  it.live(
    "a sandbox Modal ends by its idle timeout, or evicts for its memory, is a disconnect saying so (not \"exited with code 0\" or \"terminated\")",
    () =>
      Effect.gen(function*() {
        const idle = yield* buildRuntime(layer())
        const idled = latest()
        yield* Effect.promise(() => standinOf().end(idled.id, "idle-timeout"))
        yield* expectDisconnected(
          idle.rt,
          `Modal sandbox ${idled.id} ended: its idle timeout ran out (nothing reached it through its tunnels)`
        )
        yield* idle.release
        const oom = yield* buildRuntime(layer())
        const evicted = latest()
        yield* Effect.promise(() => standinOf().end(evicted.id, "out-of-memory"))
        const status = yield* oom.rt.status.pipe(
          Stream.takeUntil((s) => s === "ERROR_MEMORY"),
          Stream.runLast,
          Effect.timeout("15 seconds")
        )
        assert.deepStrictEqual(status, Option.some("ERROR_MEMORY"))
        const error = yield* oom.rt.runCommand("echo never").pipe(Effect.flip)
        assert.include(
          error.message,
          `Modal sandbox ${evicted.id} ended: it ran out of memory: Sandbox ran out of memory (OOM) and was terminated`
        )
        yield* oom.release
        yield* noContainers
      }),
    120_000
  )

  it.live(
    "tunnels missing from the create's answer are waited for, and the start goes on once they come",
    () =>
      Effect.gen(function*() {
        let open!: () => void
        standinOf().holdTunnels(new Promise<void>((resolve) => open = resolve))
        const asked = () => standinOf().calls.filter((c) => c.method === "SandboxGetTunnelsV2").length
        const before = asked()
        const start = yield* Effect.forkChild(buildRuntime(layer()))
        yield* Effect.sync(asked).pipe(
          Effect.repeat({ schedule: Schedule.spaced("50 millis"), until: (n) => n > before })
        )
        open()
        const { rt, release } = yield* Fiber.join(start)
        assert.strictEqual((yield* rt.runCommand("echo tunnelled")).content.trim(), "tunnelled")
        yield* release
        yield* noContainers
      }),
    120_000
  )

  it.live(
    "tunnels that never come are a start error saying so, and the sandbox is terminated",
    () =>
      Effect.gen(function*() {
        let open!: () => void
        // Modal's own long poll for them gives up (here after 1 s) and answers TIMEOUT.
        standinOf().holdTunnels(new Promise<void>((resolve) => open = resolve), 1)
        const error = yield* startError(layer()).pipe(Effect.ensuring(Effect.sync(() => open())))
        const sandbox = latest()
        assert.instanceOf(error, RuntimeStartError)
        assert.strictEqual(
          (error as RuntimeStartError).message,
          `Modal sandbox ${sandbox.id} opened no tunnels: Modal's wait for them (at most 50 s) timed out`
        )
        assert.strictEqual((error as RuntimeStartError).provider?.reason, "timeout")
        assert.strictEqual(sandbox.result?.status, STATUS.terminated)
        yield* noContainers
      }),
    120_000
  )

  /** A second SDK client, as another program would make it (the stand-in through MODAL_SERVER_URL). */
  const modalClient = () => {
    process.env["MODAL_SERVER_URL"] = standinOf().url
    return new ModalClient({ tokenId: TOKEN_ID, tokenSecret: TOKEN_SECRET })
  }

  /** A sandbox of our image and app that only sleeps, made through that client: no owner keeps it busy. */
  const sleeper = (params: { readonly tags?: Record<string, string>; readonly idleTimeoutMs?: number }) =>
    Effect.promise(async () => {
      const client = modalClient()
      const app = await client.apps.fromName("effect-sandbox", { createIfMissing: true })
      const image = await client.images.fromName("effect-sandbox-runtime")
      return client.sandboxes.create(app, image, { command: ["sleep", "infinity"], ...params })
    })
})
