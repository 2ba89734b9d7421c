/**
 * The tools a DockerRuntime runs beside its shell: `ipython` (the server's plugins) and the browser flag
 * reach the server's command line and the runtime's capabilities; Chromium runs
 * headless as the sandbox user on the tools image; what an image lacks for them
 * is named by the preflight; an MCP server that cannot start fails the start.
 * Every test ends with its container gone.
 */
import { afterAll, assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { chownSync, copyFileSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DEFAULT_SANDBOX_UID } from "../../src/runtimeImage/sandboxUser.ts"
import { assertKeyHidden, envDumpingMcpServer } from "../layers/sandboxEnvProbe.ts"
import {
  assertNoContainer,
  buildRuntime,
  containerName,
  dockerLayer,
  inspect,
  refusedStart,
  removeLeftovers,
  sessionId,
  sh
} from "./helpers.ts"
import { baseImage, describeDocker, toolsImage } from "./infra.ts"

describeDocker("DockerRuntime tools", () => {
  const base = baseImage()
  const tools = toolsImage()
  afterAll(() => removeLeftovers("tools"))

  it.live(
    "ipython and browser pass --plugins jupyter agent_skills and --enable-browser to the server and reports them; Chromium renders as the sandbox uid",
    () =>
      Effect.gen(function*() {
        const session = sessionId("tools")
        const { release, rt } = yield* buildRuntime(
          dockerLayer(tools, { sessionId: session, ipython: true, browser: true })
        )
        assert.deepStrictEqual(rt.info.capabilities, {
          pause: true,
          ipython: true,
          browser: true,
          mcp: false,
          snapshot: true
        })
        const cmd = (yield* inspect(containerName(session)))!.Config.Cmd
        assert.deepStrictEqual(cmd.slice(cmd.indexOf("--plugins"), cmd.indexOf("--plugins") + 4), [
          "--plugins",
          "jupyter",
          "agent_skills",
          "--enable-browser"
        ])
        assert.notInclude(cmd, "--no-enable-browser")
        assert.strictEqual((yield* sh(rt, "id -u")).content, String(DEFAULT_SANDBOX_UID))
        const dom = yield* sh(
          rt,
          "/usr/bin/chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage " +
            "--dump-dom 'data:text/html,<title>t</title><p>rendered</p>' 2>/dev/null"
        )
        assert.strictEqual(dom.exitCode, 0)
        assert.strictEqual(dom.content, "<html><head><title>t</title></head><body><p>rendered</p></body></html>")
        yield* release
        assertNoContainer(session)
      }),
    180_000
  )

  it.live(
    "listens on 0.0.0.0 with a key, which no shell, kernel, Chromium or MCP server of the container sees",
    () =>
      Effect.gen(function*() {
        const session = sessionId("tools")
        // Mounted at /workspace: a stdio MCP server for the image's Node that records its environment.
        const workspace = mkdtempSync(join(tmpdir(), "docker-key-"))
        chownSync(workspace, DEFAULT_SANDBOX_UID, DEFAULT_SANDBOX_UID)
        copyFileSync(join(import.meta.dirname, "fixtures", "envdumpMcp.mjs"), join(workspace, "envdump.mjs"))
        const { release, rt } = yield* buildRuntime(dockerLayer(tools, {
          sessionId: session,
          workspace,
          ipython: { agentSkills: false },
          browser: true,
          mcp: {
            stdio: [
              envDumpingMcpServer("/tmp/mcp-env", "/opt/effect-sandbox/bin/node", ["/workspace/envdump.mjs"])
            ]
          }
        }))
        const config = (yield* inspect(containerName(session)))!.Config
        assert.deepStrictEqual(config.Cmd.slice(config.Cmd.indexOf("--host"), config.Cmd.indexOf("--host") + 2), [
          "--host",
          "0.0.0.0"
        ])
        const key = config.Labels["effect-sandbox.session-key"]!
        assert.isAtLeast(key.length, 16)
        assert.isFalse(config.Env.some((e: string) => e.includes(key)), "the key is not in the container's environment")
        // Only its digest, which is all the server checks requests against.
        assert.include(
          config.Env,
          `EFFECT_SANDBOX_SESSION_API_KEY_SHA256=${createHash("sha256").update(key).digest("hex")}`
        )
        const check = Effect.gen(function*() {
          yield* assertKeyHidden(rt, { key, kernel: true, browser: true, mcpEnvFile: "/tmp/mcp-env" })
          // Every process of the container (docker-init as PID 1, the server), not only the session's.
          const everywhere = yield* rt.runCommand(
            `cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c -e '${key}'; ls -A /tmp`
          )
          assert.strictEqual(everywhere.content.split("\n")[0], "0", everywhere.content)
          assert.notInclude(everywhere.content, ".effect-sandbox-session-key", "the key file was removed")
        })
        yield* check.pipe(
          Effect.ensuring(
            Effect.andThen(release, Effect.sync(() => rmSync(workspace, { recursive: true, force: true })))
          )
        )
        assertNoContainer(session)
      }),
    180_000
  )

  it.live(
    "without ipython or browser: --no-enable-browser, no --plugins, no tool capabilities",
    () =>
      Effect.gen(function*() {
        const session = sessionId("tools")
        const { release, rt } = yield* buildRuntime(dockerLayer(tools, { sessionId: session }))
        assert.deepStrictEqual(rt.info.capabilities, {
          pause: true,
          ipython: false,
          browser: false,
          mcp: false,
          snapshot: true
        })
        const cmd = (yield* inspect(containerName(session)))!.Config.Cmd
        assert.include(cmd, "--no-enable-browser")
        assert.notInclude(cmd, "--plugins")
        yield* release
        assertNoContainer(session)
      }),
    120_000
  )

  const missing = [
    {
      tool: "the jupyter plugin",
      lacking: "ipykernel",
      options: { ipython: true },
      says: "the jupyter plugin needs ipykernel and jupyter_client for /usr/bin/python3: add the Debian packages " +
        "python3-ipykernel python3-jupyter-client to the base image " +
        "(in a Dockerfile: RUN apt-get install -y python3-ipykernel python3-jupyter-client)."
    },
    {
      tool: "the browser",
      lacking: "Chromium",
      options: { browser: true },
      says: "the browser needs Chromium at /usr/bin/chromium: add the Debian packages chromium fonts-liberation " +
        "to the base image (in a Dockerfile: RUN apt-get install -y chromium fonts-liberation)."
    }
  ]
  for (const { lacking, options, says, tool } of missing) {
    it.live(
      `${tool} on an image without ${lacking} is refused by the preflight, naming what to install`,
      () =>
        Effect.gen(function*() {
          const message = yield* refusedStart(
            "tools",
            (session) => dockerLayer(base, { sessionId: session, ...options })
          )
          assert.strictEqual(message, `The base image ${base} cannot host the sandbox: ${says}`)
        }),
      120_000
    )
  }

  it.live(
    "an MCP server whose command the container lacks fails the start, and the container goes",
    () =>
      Effect.gen(function*() {
        const message = yield* refusedStart("tools", (session) =>
          dockerLayer(tools, {
            sessionId: session,
            mcp: { stdio: [{ name: "absent", command: "/usr/local/bin/no-such-mcp-server", args: [], env: {} }] }
          }))
        assert.match(message, /^MCP servers failed to start: .*absent/s)
        assert.include(message, "ENOENT")
      }),
    120_000
  )
})
