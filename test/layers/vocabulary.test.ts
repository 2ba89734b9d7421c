/**
 * Swapping runtimes does not silently change behaviour: the same options (services/RuntimeOptions.ts)
 * give the same results on CliRuntime, LocalRuntime and DockerRuntime. One table, each case one
 * runtime (one container for Docker): the workspace restriction with CliRuntime's exact text, `env`
 * and `sandbox.runtimeStartupEnvVars` in the shell, `sessionId` and `keepWorkspace`, `SANDBOX_*`
 * variables read through Effect's `Config` (a map provider, not process.env), and the tools by the
 * same names.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { DockerRuntime } from "../../src/docker.ts"
import {
  CliRuntime,
  CmdOutputObservation,
  CmdRunAction,
  ErrorObservation,
  FileReadObservation,
  IPythonRunCellAction,
  McpCallAction,
  Runtime,
  type RuntimeOptions,
  SandboxConfig
} from "../../src/index.ts"
import { LocalRuntime } from "../../src/local.ts"
import { chromiumAvailable } from "../conformance/chromium.ts"
import { TIMEOUT_TEMPLATE } from "../conformance/helpers.ts"
import { kernelAvailable } from "../conformance/kernel.ts"
import { everythingInContainer, everythingServer } from "../conformance/mcp.ts"
import { required } from "../conformance/requirement.ts"
import { dockerCli } from "../docker/helpers.ts"
import { baseImage, engineAnswers, toolsImage } from "../docker/infra.ts"

const dockerUp = required(engineAnswers(), {
  ci: "The runtime vocabulary tests need a running Docker engine in CI: .ci/run installs docker.io and starts dockerd.",
  skipped: "DockerRuntime vocabulary cases skipped: no Docker engine answers `docker info`."
})
const hostTools = kernelAvailable() && chromiumAvailable()

interface Target {
  readonly name: string
  /** Whether the machine can run it (in CI it must: `required` throws). */
  readonly present: boolean
  /** Whether the machine can run it with the kernel and the browser. */
  readonly tools: boolean
  /** A fresh runtime with `options` (the image, for Docker, unless `SANDBOX_BASE_CONTAINER_IMAGE` names it). */
  readonly layer: (options: RuntimeOptions, image?: "base" | "tools" | "config") => Layer.Layer<Runtime, unknown>
  /** The stdio MCP server as this runtime runs it, and the sandbox settings it needs. */
  readonly mcp: { readonly server: typeof everythingServer; readonly sandbox: SandboxConfig }
  /** Where the runtime's workspace is on this machine (Docker mounts it at /workspace). */
  readonly hostWorkspace: (rt: Runtime["Service"]) => string
}

const targets: ReadonlyArray<Target> = [
  {
    name: "CliRuntime",
    present: true,
    tools: hostTools,
    layer: (options) => Layer.fresh(CliRuntime.layer(options)),
    mcp: { server: everythingServer, sandbox: new SandboxConfig({}) },
    hostWorkspace: (rt) => rt.info.workspace
  },
  {
    name: "LocalRuntime",
    present: true,
    tools: hostTools,
    layer: (options) => Layer.fresh(LocalRuntime.layer(options)),
    mcp: { server: everythingServer, sandbox: new SandboxConfig({}) },
    hostWorkspace: (rt) => rt.info.workspace
  },
  {
    name: "DockerRuntime",
    present: dockerUp,
    tools: dockerUp,
    layer: (options, image = "base") =>
      Layer.fresh(DockerRuntime.layer({
        ...(image === "config" ? {} : { baseImage: image === "base" ? baseImage() : toolsImage() }),
        ...options
      })),
    mcp: {
      server: everythingInContainer.server,
      sandbox: new SandboxConfig({ volumes: everythingInContainer.volume })
    },
    hostWorkspace: (rt) => {
      const binds =
        dockerCli("inspect", "--format", "{{json .HostConfig.Binds}}", `effect-sandbox-${rt.info.id}`).stdout
      return (JSON.parse(binds) as Array<string>).find((bind) => bind.endsWith(":/workspace:rw"))!.split(":")[0]!
    }
  }
]

const withRuntime = <A, E>(layer: Layer.Layer<Runtime, unknown>, f: (rt: Runtime["Service"]) => Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    return yield* f(yield* Runtime)
  }).pipe(Effect.provide(layer))

const shell = (rt: Runtime["Service"], command: string) =>
  rt.runCommand(command).pipe(
    Effect.map((obs) => {
      assert.instanceOf(obs, CmdOutputObservation, obs.content)
      return obs as CmdOutputObservation
    })
  )

describe.each(targets)("the same options on $name", (target) => {
  it.live.skipIf(!target.present)(
    "by default: file actions outside the workspace refused with CliRuntime's text; env and startup variables in the shell",
    () =>
      withRuntime(
        target.layer({
          env: { VOCAB_ENV: "from env", VOCAB_BOTH: "env wins" },
          sandbox: new SandboxConfig({
            runtimeStartupEnvVars: { VOCAB_STARTUP: "from startup", VOCAB_BOTH: "startup" }
          })
        }),
        (rt) =>
          Effect.gen(function*() {
            const ws = rt.info.workspace
            const refused = yield* rt.read("/etc/hostname")
            assert.instanceOf(refused, ErrorObservation)
            assert.strictEqual(refused.content, `Invalid path: /etc/hostname. You can only work with files in ${ws}.`)
            const written = yield* rt.write({ path: "/etc/vocabulary-test", content: "no" })
            assert.strictEqual(
              written.content,
              `Invalid path: /etc/vocabulary-test. You can only work with files in ${ws}.`
            )
            assert.strictEqual((yield* shell(rt, "test -e /etc/vocabulary-test && echo yes || echo no")).content, "no")
            assert.strictEqual(
              (yield* shell(rt, "echo \"$VOCAB_ENV|$VOCAB_STARTUP|$VOCAB_BOTH\"")).content,
              "from env|from startup|env wins"
            )
            const { browser, ipython, mcp } = rt.info.capabilities
            assert.deepStrictEqual({ browser, ipython, mcp }, { browser: false, ipython: false, mcp: false })
          })
      ),
    180_000
  )

  it.live.skipIf(!target.present)(
    "sessionId names the session; keepWorkspace keeps the temporary workspace",
    () =>
      Effect.gen(function*() {
        const session = `vocab-${randomBytes(5).toString("hex")}`
        const kept = yield* withRuntime(
          target.layer({ sessionId: session, keepWorkspace: true }),
          (rt) =>
            Effect.gen(function*() {
              assert.strictEqual(rt.info.id, session)
              yield* rt.write({ path: "kept.txt", content: "still here" })
              return target.hostWorkspace(rt)
            })
        )
        try {
          assert.strictEqual(readFileSync(join(kept, "kept.txt"), "utf8"), "still here\n")
        } finally {
          rmSync(kept, { recursive: true, force: true })
        }
      }),
    180_000
  )

  it.live.skipIf(!target.present)(
    "restrictToWorkspace: false lets file actions reach the rest of the machine",
    () =>
      withRuntime(target.layer({ restrictToWorkspace: false }), (rt) =>
        Effect.gen(function*() {
          const read = yield* rt.read("/etc/hostname")
          assert.instanceOf(read, FileReadObservation, read.content)
          assert.strictEqual(read.content, `${(yield* shell(rt, "cat /etc/hostname")).content}\n`)
        })),
    180_000
  )

  it.live.skipIf(!target.present)(
    "SANDBOX_* variables from the ConfigProvider: the default timeout and the startup variables (and Docker's image)",
    () =>
      withRuntime(target.layer({}, "config"), (rt) =>
        Effect.gen(function*() {
          assert.strictEqual((yield* shell(rt, "echo \"$VOCAB_FROM_CONFIG\"")).content, "from SANDBOX_*")
          const timedOut = yield* rt.runCommand(new CmdRunAction({ command: "sleep 3", blocking: true }))
          assert.instanceOf(timedOut, CmdOutputObservation)
          assert.strictEqual(
            timedOut.metadata.suffix,
            `\n[The command timed out after 1.0 seconds. ${TIMEOUT_TEMPLATE}]`
          )
        })).pipe(
          Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord({
            SANDBOX_TIMEOUT: "1",
            SANDBOX_RUNTIME_STARTUP_ENV_VARS: JSON.stringify({ VOCAB_FROM_CONFIG: "from SANDBOX_*" }),
            ...(target.name === "DockerRuntime" ? { SANDBOX_BASE_CONTAINER_IMAGE: baseImage() } : {})
          })))
        ),
    180_000
  )

  it.live.skipIf(!target.tools)("tools by the same names: ipython, browser, mcp.stdio", () =>
    withRuntime(
      target.layer({
        ipython: { agentSkills: false },
        browser: true,
        mcp: { stdio: [target.mcp.server] },
        sandbox: target.mcp.sandbox
      }, "tools"),
      (rt) =>
        Effect.gen(function*() {
          const { browser, ipython, mcp } = rt.info.capabilities
          assert.deepStrictEqual({ browser, ipython, mcp }, { browser: true, ipython: true, mcp: true })
          const cell = yield* rt.runIPython(new IPythonRunCellAction({ code: "print(6 * 7)", includeExtra: false }))
          assert.strictEqual(cell.content.trim(), "42")
          const echoed = yield* rt.callTool(new McpCallAction({ name: "echo", arguments: { message: "same" } }))
          assert.include(echoed.content, "Echo: same")
        })
    ), 180_000)
})
