/**
 * The container a DockerRuntime creates: ports published on 127.0.0.1 only,
 * app ports, limits, environment, volumes and the workspace bind mount.
 */
import { afterAll, assert, it } from "@effect/vitest"
import { Effect, Fiber, Stream } from "effect"
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { RuntimeDisconnectedError, RuntimeStartError, SandboxConfig } from "../../src/index.ts"
import { DEFAULT_SANDBOX_UID } from "../../src/runtimeImage/sandboxUser.ts"
import { eventually } from "../eventually.ts"
import {
  assertNoContainer,
  buildRuntime,
  containerName,
  dockerCli,
  dockerLayer,
  httpGet,
  inspect,
  removeLeftovers,
  sessionId,
  sh
} from "./helpers.ts"
import { baseImage, describeDocker } from "./infra.ts"

const MIB = 1024 ** 2

const tempDir = (label: string) => mkdtempSync(join(tmpdir(), `effect-sandbox-test-${label}-`))

/**
 * `command` run with an OOM score of 1000 (a process may raise its own), so
 * that it, not a bigger process, is the one the kernel kills when the container's memory runs out.
 */
const firstToDie = (command: string) => `(echo 1000 > /proc/self/oom_score_adj && exec ${command})`

/** A hog that keeps all 1 GiB it reads in memory (one line, never printed: `tail` holds it). */
const HOG = "head -c 1G /dev/zero"

/** The container's peak memory (cgroup v1 or v2). */
const PEAK = "cat /sys/fs/cgroup/memory/memory.max_usage_in_bytes /sys/fs/cgroup/memory.peak 2>/dev/null | head -1"

describeDocker("DockerRuntime container", () => {
  const image = baseImage()
  afterAll(() => removeLeftovers("ctr"))

  it.live(
    "publishes the server and app ports on 127.0.0.1 only, and app ports answer through info.urls",
    () =>
      Effect.gen(function*() {
        const session = sessionId("ctr")
        const { release, rt } = yield* buildRuntime(dockerLayer(image, { sessionId: session, appPorts: [9000] }))
        const info = (yield* inspect(containerName(session)))!
        const bindings = info.HostConfig.PortBindings as Record<string, Array<{ HostIp: string; HostPort: string }>>
        assert.deepStrictEqual(Object.keys(bindings).sort(), ["8000/tcp", "9000/tcp"])
        for (const list of Object.values(bindings)) {
          for (const binding of list) assert.strictEqual(binding.HostIp, "127.0.0.1")
        }
        const published = info.NetworkSettings.Ports
        assert.deepStrictEqual(Object.keys(published).sort(), ["8000/tcp", "9000/tcp"])
        for (const list of Object.values(published)) {
          assert.isNotEmpty(list)
          for (const binding of list) {
            assert.strictEqual(binding.HostIp, "127.0.0.1")
            assert.notStrictEqual(binding.HostIp, "0.0.0.0")
          }
        }
        assert.strictEqual(rt.info.urls["actionServer"], `http://127.0.0.1:${published["8000/tcp"]![0]!.HostPort}`)
        assert.strictEqual(rt.info.urls["app-9000"], `http://127.0.0.1:${published["9000/tcp"]![0]!.HostPort}`)

        const started = yield* sh(
          rt,
          `nohup /opt/effect-sandbox/bin/node -e "require('http').createServer((q,s)=>s.end('app ok')).listen(9000)" >/dev/null 2>&1 &`
        )
        assert.strictEqual(started.exitCode, 0)
        const answer = yield* httpGet(rt.info.urls["app-9000"]!)
        assert.deepStrictEqual(answer, { status: 200, body: "app ok" })
        yield* release
        assertNoContainer(session)
      }),
    60_000
  )

  it.live("applies the configured limits, init and user", () =>
    Effect.gen(function*() {
      const session = sessionId("ctr")
      const { release, rt } = yield* buildRuntime(
        dockerLayer(image, { sessionId: session, memoryMiB: 512, cpus: 1.5, pidsLimit: 300, userId: 1000 })
      )
      const info = (yield* inspect(containerName(session)))!
      assert.strictEqual(info.HostConfig.Memory, 512 * MIB)
      assert.strictEqual(info.HostConfig.NanoCpus, 1_500_000_000)
      assert.strictEqual(info.HostConfig.PidsLimit, 300)
      assert.strictEqual(info.HostConfig.Init, true)
      // The gid is the uid's number too (the image builder makes the group).
      assert.strictEqual(info.Config.User, "1000:1000")
      assert.strictEqual((yield* sh(rt, "echo $(id -u):$(id -g)")).content, "1000:1000")
      // The pids limit holds inside: the cgroup says so.
      assert.strictEqual((yield* sh(rt, "cat /sys/fs/cgroup/pids/pids.max")).content, "300")
      yield* release
      assertNoContainer(session)
    }), 60_000)

  it.live(
    "a memory hog dies inside its 128 MiB container; the session goes on and the host is unharmed",
    () =>
      Effect.gen(function*() {
        const session = sessionId("ctr")
        const { release, rt } = yield* buildRuntime(dockerLayer(image, { sessionId: session, memoryMiB: 128 }))
        assert.strictEqual((yield* inspect(containerName(session)))!.HostConfig.Memory, 128 * MIB)
        const hog = yield* rt.runCommand(`${HOG} | ${firstToDie("tail")}; echo "exit=\${PIPESTATUS[1]}"`)
        // The OOM killer chose tail (SIGKILL, 128 + 9) and the session goes on.
        assert.include(hog.content, "exit=137")
        assert.strictEqual((yield* sh(rt, "echo still here")).content, "still here")
        // The 1 GiB never existed outside the cgroup: its peak stayed within the limit.
        const peak = (yield* sh(rt, PEAK)).content
        assert.isAtMost(Number(peak), 128 * MIB, peak)
        // The engine is unharmed: only the container's cgroup was short of memory. (Host free memory is
        // no measure here: other test files start browsers and containers at the same time.)
        assert.strictEqual(dockerCli("info").status, 0)
        yield* release
        assertNoContainer(session)
      }),
    120_000
  )

  it.live(
    "an action server killed for memory is a disconnect; the engine records the OOM kill",
    () =>
      Effect.gen(function*() {
        const session = sessionId("ctr")
        // A `docker exec` as root may write the server's score (owned by the sandbox user) only with
        // DAC_OVERRIDE and without no-new-privileges (which keeps an exec'd root from taking any
        // capability): the operator's escape hatch gives that back for this test's container.
        const sandbox = new SandboxConfig({
          dockerRuntimeKwargs: { HostConfig: { CapAdd: ["DAC_OVERRIDE"], SecurityOpt: [] } }
        })
        const { release, rt } = yield* buildRuntime(
          dockerLayer(image, { sessionId: session, memoryMiB: 128, sandbox })
        )
        const statuses = yield* rt.status.pipe(
          Stream.takeUntil((s) => s === "ERROR_MEMORY" || s === "ERROR_RUNTIME_DISCONNECTED"),
          Stream.runCollect,
          Effect.forkChild
        )
        // The shells run at OOM score 1000 (executor/shell/prompt.ts) so that a hog dies before the
        // server. To see the server's own death, the test turns that around from outside, as root:
        // the server (the `node` process) at 1000, everything else at 0.
        const raised = dockerCli(
          "exec",
          "-u",
          "0",
          containerName(session),
          "sh",
          "-c",
          // By its command line: root without CAP_SYS_PTRACE cannot read another user's `exe` link.
          // (docker-init, pid 1, names the server in its own; it stays at 0.)
          "for d in /proc/[0-9]*; do case \"$(tr '\\000' ' ' < $d/cmdline)\" in " +
            "*/docker-init\\ *) echo 0 > $d/oom_score_adj ;; */node\\ */server.mjs\\ *) echo 1000 > $d/oom_score_adj ;; " +
            "*) echo 0 > $d/oom_score_adj ;; esac; done 2>/dev/null; true"
        )
        assert.strictEqual(raised.status, 0, raised.stderr)
        const failure = yield* Effect.flip(rt.runCommand(`${HOG} | tail`))
        assert.instanceOf(failure, RuntimeDisconnectedError)
        assert.include(failure.message, "start a new runtime")
        // The request may fail before the engine has marked the container stopped: then the status
        // says disconnected, else out of memory; the engine's record is checked below either way.
        assert.includeMembers(["ERROR_MEMORY", "ERROR_RUNTIME_DISCONNECTED"], [(yield* Fiber.join(statuses)).at(-1)!])
        yield* eventually(
          "the container stopped",
          () => dockerCli("inspect", "-f", "{{.State.Running}}", containerName(session)).stdout.trim() === "false",
          10_000,
          250
        )
        assert.isTrue((yield* inspect(containerName(session)))!.State.OOMKilled)
        assert.instanceOf(yield* Effect.flip(rt.runCommand("echo again")), RuntimeDisconnectedError)
        yield* release
        assertNoContainer(session)
      }),
    120_000
  )

  it.live("env and sandbox.runtimeStartupEnvVars reach the shell", () =>
    Effect.gen(function*() {
      const session = sessionId("ctr")
      const sandbox = new SandboxConfig({ runtimeStartupEnvVars: { STARTUP_ONE: "from-startup", SHARED: "startup" } })
      const { release, rt } = yield* buildRuntime(
        dockerLayer(image, { sessionId: session, sandbox, env: { OPT_ONE: "from-options", SHARED: "options" } })
      )
      const out = yield* sh(rt, "echo \"$STARTUP_ONE|$OPT_ONE|$SHARED|$RUNTIME_ID\"")
      assert.strictEqual(out.content, `from-startup|from-options|options|${session}`)
      yield* release
      assertNoContainer(session)
    }), 60_000)

  it.live("sandbox.volumes binds a host directory read-only", () =>
    Effect.gen(function*() {
      const session = sessionId("ctr")
      const dir = tempDir("ro")
      chmodSync(dir, 0o777) // only the :ro mode may stop a write
      writeFileSync(join(dir, "given.txt"), "from the host\n")
      const sandbox = new SandboxConfig({ volumes: `${dir}:/data:ro` })
      const { release, rt } = yield* buildRuntime(dockerLayer(image, { sessionId: session, sandbox }))
      const mount = (yield* inspect(containerName(session)))!.Mounts.find((m) => m.Destination === "/data")!
      assert.strictEqual(mount.Source, dir)
      assert.isFalse(mount.RW)
      assert.strictEqual((yield* sh(rt, "cat /data/given.txt")).content, "from the host")
      const write = yield* sh(rt, "echo nope > /data/new.txt")
      assert.notStrictEqual(write.exitCode, 0)
      assert.include(write.content, "Read-only file system")
      assert.isFalse(existsSync(join(dir, "new.txt")))
      yield* release
      assertNoContainer(session)
      // The host directory is the user's: it stays.
      assert.strictEqual(readFileSync(join(dir, "given.txt"), "utf8"), "from the host\n")
      rmSync(dir, { recursive: true, force: true })
    }), 60_000)

  it.live("the workspace is a bind mount of the host directory given as `workspace`", () =>
    Effect.gen(function*() {
      const session = sessionId("ctr")
      const dir = tempDir("ws")
      // The sandbox user's directory (on a developer's machine, the owner's: a non-root owner's sandbox runs as itself).
      chownSync(dir, DEFAULT_SANDBOX_UID, DEFAULT_SANDBOX_UID)
      const { release, rt } = yield* buildRuntime(dockerLayer(image, { sessionId: session, workspace: dir }))
      assert.strictEqual(rt.info.workspace, "/workspace")
      assert.strictEqual((yield* sh(rt, "pwd")).content, "/workspace")
      const written = yield* sh(rt, "echo made in the sandbox > /workspace/from-sandbox.txt")
      assert.strictEqual(written.exitCode, 0)
      assert.strictEqual(readFileSync(join(dir, "from-sandbox.txt"), "utf8"), "made in the sandbox\n")
      writeFileSync(join(dir, "from-host.txt"), "made on the host\n")
      assert.strictEqual((yield* sh(rt, "cat /workspace/from-host.txt")).content, "made on the host")
      yield* release
      assertNoContainer(session)
      // A workspace the caller gave is never removed.
      assert.isTrue(existsSync(join(dir, "from-sandbox.txt")))
      rmSync(dir, { recursive: true, force: true })
    }), 60_000)

  // overlay2 enforces a quota only on xfs with pquota; this suite's engines (overlay2 on ext4) refuse it.
  it.live.skipIf(dockerCli("info", "--format", "{{json .DriverStatus}}").stdout.includes("\"xfs\""))(
    "a storage limit the engine cannot enforce fails the start with a clear error and leaves no container",
    () =>
      Effect.gen(function*() {
        const session = sessionId("ctr")
        const error = yield* Effect.flip(
          buildRuntime(dockerLayer(image, { sessionId: session, storageBytes: 2 * 1024 * MIB }))
        )
        assert.instanceOf(error, RuntimeStartError)
        assert.match(
          error.message,
          /^DockerRuntime's storageBytes \(2147483648\) needs an engine that enforces container disk quotas \(overlay2 on xfs mounted with 'pquota', or btrfs, zfs, devicemapper\); this engine refused it\. Leave storageBytes unset on this engine\. Docker could not create container .*--storage-opt is supported only for overlay over xfs with 'pquota' mount option/
        )
        assertNoContainer(session)
      }),
    60_000
  )

  it.live(
    "a container whose server cannot start fails fast with a RuntimeStartError carrying its log",
    () =>
      Effect.gen(function*() {
        const session = sessionId("ctr")
        // OpenHands' docker_runtime_kwargs are raw create options: replace the server by a command that fails.
        const sandbox = new SandboxConfig({
          dockerRuntimeKwargs: { Cmd: ["/bin/sh", "-c", "echo 'server cannot start: boom' >&2; exit 3"] }
        })
        const started = Date.now()
        const error = yield* Effect.flip(buildRuntime(dockerLayer(image, { sessionId: session, sandbox })))
        const elapsed = Date.now() - started
        assert.instanceOf(error, RuntimeStartError)
        // The container stopped within a second; waiting the whole /alive budget (60 s) for it is a bug.
        assert.isBelow(elapsed, 20_000, `failed after ${elapsed} ms: ${error.message}`)
        assert.include(error.message, "server cannot start: boom")
        // As data: the server exited, with its code and its words.
        assert.strictEqual(error.reason, "server-exited")
        assert.strictEqual(error.exitCode, 3)
        assert.include(error.output, "server cannot start: boom")
        assertNoContainer(session)
      }),
    90_000
  )
})
