/**
 * The published package works from another project as a user gets it: `npm pack`, then the tarball
 * installed (not linked by path, which loads a second Effect) into a scratch project that
 * type-checks with `skipLibCheck: false` and runs one example per subpath. Packing runs the
 * package's `prepare` (the build) and the install resolves from the npm cache, so this test is
 * slow (~2 min with the skills and browser cases on an idle machine; the limit leaves room for a busy one).
 */
import { assert, describe, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { chromiumAvailable } from "./conformance/chromium.ts"
import { kernelAvailable } from "./conformance/kernel.ts"
import { required } from "./conformance/requirement.ts"
import { engineAnswers } from "./docker/infra.ts"

const root = resolve(import.meta.dirname, "..")
/** agent_skills' file_editor, from the built package (dist/ for CliRuntime, payload/ for LocalRuntime's server). */
const SKILLS_CELL = "import json\nprint(json.loads(file_editor('view', '/no-such-file').split('\\n')[1])['error'])"
const SKILLS_ERROR =
  "Invalid `path` parameter: /no-such-file. The path /no-such-file does not exist. Please provide a valid path."

const README = readFileSync(join(root, "README.md"), "utf8")

/** A line of the README's install steps, as its arguments after the given prefix (which must be there). */
const readmeCommand = (prefix: string): Array<string> => {
  const line = README.split("\n").find((l) => l.startsWith(prefix))
  assert.isDefined(line, `the README has no line starting with ${JSON.stringify(prefix)}`)
  return line!.slice(prefix.length).trim().split(/\s+/)
}

/**
 * The README's `tsconfig.json` for TypeScript users, made stricter (never more helpful): library
 * declarations are checked too (`skipLibCheck: false`), with exact optional properties. Nothing the
 * README does not say is added: no `lib`, no `target`, no `types` beyond its own.
 */
const tsconfig = () => {
  const block = /For TypeScript[\s\S]*?```json\n([\s\S]*?)```/.exec(README)
  assert.isNotNull(block, "the README has a tsconfig.json block for TypeScript users")
  const readme = JSON.parse(block![1]!) as { readonly compilerOptions: Record<string, unknown> }
  return {
    compilerOptions: { ...readme.compilerOptions, exactOptionalPropertyTypes: true, skipLibCheck: false, noEmit: true },
    include: ["*.ts"]
  }
}

/** Shared by the root and /local examples: one command, then (when asked) agent_skills and the browser. */
const program = `const program = (name: string) => Effect.gen(function*() {
  const rt = yield* Runtime
  const obs = yield* rt.run(new CmdRunAction({ command: "echo " + name + "-ok" }))
  console.log(obs.content)
})
const skills = Effect.gen(function*() {
  const rt = yield* Runtime
  const obs = yield* rt.runIPython(new IPythonRunCellAction({ code: ${
  JSON.stringify(SKILLS_CELL)
}, includeExtra: false }))
  console.log(obs.content)
})
// The browser: Playwright from dependencies (CliRuntime) and from the payload (LocalRuntime's server).
const browse = Effect.gen(function*() {
  const rt = yield* Runtime
  const obs = yield* rt.browse("data:text/html,<h1>Packed page</h1>")
  console.log(obs.content.split("\\n")[2])
})
`

const EXAMPLES = {
  "root.ts": `import { Effect } from "effect"
import { CliRuntime, CmdRunAction, IPythonRunCellAction, Runtime } from "effect-sandbox"
${program}
await Effect.runPromise(program("cli").pipe(Effect.provide(CliRuntime.layer())))
if (process.argv.includes("skills")) await Effect.runPromise(skills.pipe(Effect.provide(CliRuntime.layer({ ipython: true }))))
if (process.argv.includes("browser")) await Effect.runPromise(browse.pipe(Effect.provide(CliRuntime.layer({ browser: true }))))
`,
  // LocalRuntime runs the installed package's bundled server payload.
  "local.ts": `import { Effect } from "effect"
import { CmdRunAction, IPythonRunCellAction, Runtime } from "effect-sandbox"
import { LocalRuntime } from "effect-sandbox/local"
${program}
await Effect.runPromise(program("local").pipe(Effect.provide(LocalRuntime.layer())))
if (process.argv.includes("skills")) {
  await Effect.runPromise(skills.pipe(Effect.provide(LocalRuntime.layer({ ipython: true }))))
}
if (process.argv.includes("browser")) await Effect.runPromise(browse.pipe(Effect.provide(LocalRuntime.layer({ browser: true }))))
`,
  // Imported and type-checked without dockerode (an optional peer): building a layer is what loads it.
  "docker.ts": `import { Effect, Layer } from "effect"
import { CmdRunAction, Runtime } from "effect-sandbox"
import { DockerEngine, DockerRuntime, DockerSandboxPool } from "effect-sandbox/docker"
export const program = Effect.gen(function*() {
  const rt = yield* Runtime
  return yield* rt.run(new CmdRunAction({ command: "echo docker-ok" }))
}).pipe(Effect.provide(DockerRuntime.layer({ baseImage: "debian:bookworm" })))
export const warm = DockerRuntime.layerWarm().pipe(Layer.provide(DockerRuntime.layerPool({ poolSize: 1 })))
console.log(Effect.isEffect(program) && Layer.isLayer(warm) && DockerSandboxPool.key)
// The engine layer imports dockerode and pings the engine.
const engine = Effect.gen(function*() {
  return (yield* DockerEngine).address
}).pipe(Effect.provide(DockerEngine.layer), Effect.catchTag("RuntimeStartError", (e) => Effect.succeed(e.message)))
console.log(await Effect.runPromise(engine))
`,
  // The remote subpath: without a key (none in the test's environment) building the layer fails with OpenHands' text.
  "remote.ts": `import { Effect, Layer } from "effect"
import { apiRetrySchedule, RemoteRuntime } from "effect-sandbox/remote"
const layer = RemoteRuntime.layer({ image: "effect-sandbox-runtime:any" })
const built = Effect.scoped(Layer.build(layer)).pipe(Effect.flip, Effect.map((e) => e.message))
console.log(Layer.isLayer(layer) && typeof apiRetrySchedule)
console.log(await Effect.runPromise(built))
`,
  // Imported and type-checked without @kubernetes/client-node (an optional peer): building a layer is what loads it.
  "kubernetes.ts": `import { Effect, Layer } from "effect"
import { CmdRunAction, Runtime } from "effect-sandbox"
import { KubernetesRuntime, KubernetesSandboxPool } from "effect-sandbox/kubernetes"
export const program = Effect.gen(function*() {
  const rt = yield* Runtime
  return yield* rt.run(new CmdRunAction({ command: "echo kubernetes-ok" }))
}).pipe(Effect.provide(KubernetesRuntime.layer({ image: "registry.example/effect-sandbox-runtime:1" })))
export const warm = KubernetesRuntime.layerWarm().pipe(Layer.provide(KubernetesRuntime.layerPool({ poolSize: 1 })))
console.log(Effect.isEffect(program) && Layer.isLayer(warm) && KubernetesSandboxPool.key)
const started = program.pipe(Effect.catchTag("RuntimeStartError", (e) => Effect.succeed(e.message)))
console.log(await Effect.runPromise(started))
`,
  // Imported and type-checked without @daytonaio/sdk (an optional peer): building a layer is what loads it.
  "daytona.ts": `import { Effect, Layer, Redacted } from "effect"
import { CmdRunAction, Runtime } from "effect-sandbox"
import { DaytonaRuntime, DaytonaSandboxPool, snapshotDockerfile } from "effect-sandbox/daytona"
export const program = Effect.gen(function*() {
  const rt = yield* Runtime
  return yield* rt.run(new CmdRunAction({ command: "echo daytona-ok" }))
}).pipe(Effect.provide(DaytonaRuntime.layer({ apiKey: Redacted.make("dtn_package_test"), apiUrl: "http://127.0.0.1:1/api" })))
export const warm = DaytonaRuntime.layerWarm().pipe(Layer.provide(DaytonaRuntime.layerPool({ poolSize: 1 })))
console.log(Effect.isEffect(program) && Layer.isLayer(warm) && DaytonaSandboxPool.key)
console.log(snapshotDockerfile("runtime:tag").split("\\n")[0])
console.log(await Effect.runPromise(program.pipe(Effect.map((o) => o.content), Effect.catchTag("RuntimeStartError", (e) => Effect.succeed(e.message)))))
`,
  // Imported and type-checked without e2b (an optional peer): building a layer is what loads it.
  "e2b.ts": `import { Effect, Layer, Redacted } from "effect"
import { CmdRunAction, Runtime } from "effect-sandbox"
import { E2BRuntime, E2BSandboxPool, PROVIDER_RETRY } from "effect-sandbox/e2b"
const layer = E2BRuntime.layer({ apiKey: Redacted.make("e2b_package_test"), providerRetry: PROVIDER_RETRY })
export const program = Effect.gen(function*() {
  const rt = yield* Runtime
  return yield* rt.run(new CmdRunAction({ command: "echo e2b-ok" }))
}).pipe(Effect.provide(layer))
export const warm = E2BRuntime.layerWarm().pipe(Layer.provide(E2BRuntime.layerPool({ poolSize: 1 })))
console.log(Effect.isEffect(program) && Layer.isLayer(warm) && E2BSandboxPool.key)
console.log(await Effect.runPromise(program.pipe(Effect.as("started"), Effect.catchTag("RuntimeStartError", (e) => Effect.succeed(e.message)))))
`,
  // Imported and type-checked without modal (an optional peer): building a layer is what loads it.
  "modal.ts": `import { Effect, Layer, Redacted } from "effect"
import { CmdRunAction, Runtime } from "effect-sandbox"
import { ModalRuntime, ModalSandboxPool, PROVIDER_RETRY } from "effect-sandbox/modal"
const token = { tokenId: Redacted.make("ak-package"), tokenSecret: Redacted.make("as-package") }
const layer = ModalRuntime.layer({ ...token, providerRetry: PROVIDER_RETRY })
export const program = Effect.gen(function*() {
  const rt = yield* Runtime
  return yield* rt.run(new CmdRunAction({ command: "echo modal-ok" }))
}).pipe(Effect.provide(layer))
export const warm = ModalRuntime.layerWarm().pipe(Layer.provide(ModalRuntime.layerPool({ ...token, poolSize: 1 })))
console.log(Effect.isEffect(program) && Layer.isLayer(warm) && ModalSandboxPool.key)
console.log(await Effect.runPromise(program.pipe(Effect.as("started"), Effect.catchTag("RuntimeStartError", (e) => Effect.succeed(e.message)))))
`,
  // Imported and type-checked without @runloop/api-client (an optional peer): building a layer is what loads it.
  "runloop.ts": `import { Effect, Layer, Redacted } from "effect"
import { CmdRunAction, Runtime } from "effect-sandbox"
import { blueprintDockerfile, RunloopDevboxPool, RunloopRuntime } from "effect-sandbox/runloop"
const layer = RunloopRuntime.layer({ apiKey: Redacted.make("ak_package_test"), size: "SMALL" })
export const program = Effect.gen(function*() {
  const rt = yield* Runtime
  return yield* rt.run(new CmdRunAction({ command: "echo runloop-ok" }))
}).pipe(Effect.provide(layer))
export const warm = RunloopRuntime.layerWarm().pipe(Layer.provide(RunloopRuntime.layerPool({ poolSize: 1 })))
console.log(Effect.isEffect(program) && Layer.isLayer(warm) && RunloopDevboxPool.key)
console.log(blueprintDockerfile("runtime:tag").split("\\n")[0])
console.log(await Effect.runPromise(program.pipe(Effect.as("started"), Effect.catchTag("RuntimeStartError", (e) => Effect.succeed(e.message)))))
`,
  // The Promise API: a sandbox on LocalRuntime by name (its server from the package's payload), closed by \`await using\`, and a refusal thrown as SandboxError.
  "promise.ts": `import { Sandbox, SandboxError } from "effect-sandbox/promise"
{
  await using sandbox = await Sandbox.create("local")
  const result = await sandbox.commands.run("echo promise-ok; echo err >&2; exit 2")
  await sandbox.files.write("a.txt", "exact")
  const read = await sandbox.files.read("a.txt")
  console.log(JSON.stringify([result.stdout, result.stderr, result.exitCode, read, await sandbox.files.list()]))
}
const refused = await Sandbox.create("cli", { noChangeTimeoutSeconds: 0 }).catch((error: unknown) =>
  error instanceof SandboxError && error instanceof Error ? \`\${error._tag}: \${error.message}\` : "not a SandboxError"
)
console.log(refused)
`,
  // Loading the root entry opens no native addon (node-pty's pty.node, zeromq): they load with the first shell or kernel.
  "addons.ts": `const loaded: Array<string> = []
const dlopen = process.dlopen
process.dlopen = (module: object, filename: string, ...flags: Array<number>) => {
  loaded.push(filename.split("/").at(-1)!)
  dlopen.call(process, module, filename, ...flags)
}
await import("effect-sandbox")
console.log(JSON.stringify(loaded))
`
}

const npm = (cwd: string, args: ReadonlyArray<string>) =>
  execFileSync("npm", ["--no-audit", "--no-fund", "--prefer-offline", ...args], {
    cwd,
    encoding: "utf8",
    stdio: "pipe"
  })

/** Every installed package named `effect` under a node_modules tree (nested copies included). */
const effectCopies = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.name.startsWith("@")) return effectCopies(path)
    const own = entry.name === "effect" ? [path] : []
    const nested = readdirSync(path).includes("node_modules") ? effectCopies(join(path, "node_modules")) : []
    return [...own, ...nested]
  })

describe("package", () => {
  it("installs from its packed tarball, type-checks strictly and runs per subpath with one Effect", () => {
    const scratch = mkdtempSync(join(tmpdir(), "effect-sandbox-consumer-"))
    try {
      const packed = join(scratch, "packed")
      mkdirSync(packed)
      npm(root, ["pack", "--pack-destination", packed])
      const tarball = readdirSync(packed).find((name) => name.endsWith(".tgz"))!
      const app = join(scratch, "app")
      mkdirSync(app)
      writeFileSync(join(app, "package.json"), JSON.stringify({ name: "consumer", type: "module", private: true }))
      // The README's steps to the letter: its install line (the tarball at its path here), Node's types, its tsconfig.json.
      const install = readmeCommand("cd ../your-app && npm install ")
      npm(app, ["install", ...install.map((arg) => arg.endsWith(".tgz") ? join(packed, tarball) : arg)])
      npm(app, ["install", "--save-dev", ...readmeCommand("npm install --save-dev ")])
      writeFileSync(join(app, "tsconfig.json"), JSON.stringify(tsconfig()))
      for (const [name, text] of Object.entries(EXAMPLES)) writeFileSync(join(app, name), text)

      // No dockerode, client-node, Daytona SDK, e2b, modal or Runloop SDK here: their types must not be needed, and the root and /local must not load them.
      assert.deepStrictEqual(
        readdirSync(join(app, "node_modules")).filter((n) =>
          ["dockerode", "@daytonaio", "e2b", "modal", "@runloop"].includes(n)
        ),
        []
      )
      assert.isFalse(existsSync(join(app, "node_modules", "@kubernetes", "client-node")))
      const tsc = join(root, "node_modules", ".bin", "tsc")
      try {
        execFileSync(tsc, ["-p", app], { cwd: app, encoding: "utf8", stdio: "pipe" })
      } catch (error) {
        // tsc prints its diagnostics on stdout; without them a failure here says nothing.
        const { stdout } = error as { readonly stdout: string }
        assert.fail(`the consumer project does not type-check:\n${stdout}`)
      }
      assert.deepStrictEqual(effectCopies(join(app, "node_modules")), [join(app, "node_modules", "effect")])

      const run = (file: string, args: ReadonlyArray<string> = []) =>
        execFileSync(process.execPath, [file, ...args], { cwd: app, encoding: "utf8" }).trim()
      assert.strictEqual(run("addons.ts"), "[]")

      const withSkills = kernelAvailable()
      const withBrowser = chromiumAvailable()
      const args = [...(withSkills ? ["skills"] : []), ...(withBrowser ? ["browser"] : [])]
      const expected = (name: string) =>
        [
          `${name}-ok`,
          ...(withSkills ? [SKILLS_ERROR] : []),
          ...(withBrowser ? ["# Packed page"] : [])
        ].join("\n")
      assert.strictEqual(
        run("promise.ts"),
        JSON.stringify(["promise-ok\n", "err\n", 2, "exact", ["a.txt"]]) + "\n" +
          "InvalidOptionsError: Invalid CliRuntime options: noChangeTimeoutSeconds: Expected a value greater than 0"
      )
      assert.strictEqual(run("root.ts", args), expected("cli"))
      assert.strictEqual(run("local.ts", args), expected("local"))

      assert.strictEqual(
        execFileSync(process.execPath, ["remote.ts"], {
          cwd: app,
          encoding: "utf8",
          env: { ...process.env, SANDBOX_API_KEY: undefined }
        }).trim(),
        "object\nRemoteRuntime options: no apiKey given and SANDBOX_API_KEY is not set (the runtime API's key, sent as " +
          "X-API-Key)."
      )
      assert.strictEqual(
        run("docker.ts"),
        "effect-sandbox/DockerSandboxPool\nDockerRuntime needs dockerode, an optional peer dependency: npm install dockerode"
      )
      assert.strictEqual(
        run("kubernetes.ts"),
        "effect-sandbox/KubernetesSandboxPool\n" +
          "KubernetesRuntime needs @kubernetes/client-node, an optional peer dependency: npm install @kubernetes/client-node"
      )
      const withDocker = required(engineAnswers(), {
        ci:
          "The package test reaches the Docker engine through effect-sandbox/docker in CI: it needs a running engine.",
        skipped:
          "package test: effect-sandbox/docker not tried with dockerode (no Docker engine answers `docker info`)."
      })
      if (withDocker) {
        // --ignore-scripts: ssh2's optional native crypto build would add half a minute; dockerode does not need it.
        npm(app, ["install", "--ignore-scripts", "dockerode"])
        const address = process.env["DOCKER_HOST"] ?? "unix:///var/run/docker.sock"
        assert.strictEqual(run("docker.ts"), `effect-sandbox/DockerSandboxPool\n${address}`)
      }
      // No @daytonaio/sdk installed: the subpath loads, and building a layer says what to install.
      assert.strictEqual(
        run("daytona.ts"),
        "effect-sandbox/DaytonaSandboxPool\nFROM runtime:tag\n" +
          "DaytonaRuntime needs @daytonaio/sdk, an optional peer dependency: npm install @daytonaio/sdk"
      )
      assert.strictEqual(
        run("e2b.ts"),
        "effect-sandbox/E2BSandboxPool\nE2BRuntime needs e2b, an optional peer dependency: npm install e2b"
      )
      assert.strictEqual(
        run("modal.ts"),
        "effect-sandbox/ModalSandboxPool\nModalRuntime needs modal, an optional peer dependency: npm install modal@^0.11"
      )
      assert.strictEqual(
        run("runloop.ts"),
        "effect-sandbox/RunloopDevboxPool\nFROM runtime:tag\n" +
          "RunloopRuntime needs @runloop/api-client, an optional peer dependency: npm install @runloop/api-client"
      )
      const installed = JSON.parse(readFileSync(join(app, "node_modules", "effect-sandbox", "package.json"), "utf8"))
      assert.deepStrictEqual(installed.peerDependenciesMeta, {
        "@daytonaio/sdk": { optional: true },
        dockerode: { optional: true },
        "@kubernetes/client-node": { optional: true },
        e2b: { optional: true },
        modal: { optional: true },
        "@runloop/api-client": { optional: true }
      })
    } finally {
      rmSync(scratch, { recursive: true, force: true })
    }
  }, 480_000)
})
