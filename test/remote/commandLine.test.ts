/**
 * `effect-sandbox-runtime-api`'s command line: what it refuses before it starts anything (exit
 * code 2, a line on stderr saying why), the exposure rule first: no key, no listening beyond
 * loopback.
 */
import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { parseRuntimeApiArgs, RUNTIME_API_USAGE } from "../../src/runtimeApi/argv.ts"

const MAIN = join(import.meta.dirname, "..", "..", "src", "runtimeApi", "main.ts")

const runMain = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const { EFFECT_SANDBOX_API_KEY: _, ...inherited } = process.env
  return spawnSync(process.execPath, [MAIN, ...args], {
    env: { ...inherited, ...env },
    encoding: "utf8",
    timeout: 50_000
  })
}

/** The first line of the parser's refusal of `argv` ("accepted" when it accepts it). */
const refused = (argv: ReadonlyArray<string>) => {
  const parsed = parseRuntimeApiArgs(argv)
  return parsed._tag === "Error" ? parsed.message.split("\n")[0] : "accepted"
}

describe("effect-sandbox-runtime-api command line", () => {
  it("refuses a non-loopback host without EFFECT_SANDBOX_API_KEY", () => {
    const result = runMain(["--host", "0.0.0.0", "--port", "0"])
    assert.strictEqual(result.status, 2)
    assert.strictEqual(
      result.stderr,
      "Refusing to listen on 0.0.0.0 without an API key: anyone who can reach it could start sandboxes. " +
        "Set EFFECT_SANDBOX_API_KEY, or listen on 127.0.0.1 (the default).\n"
    )
    assert.strictEqual(result.stdout, "")
  }, 60_000)

  it("refuses SANDBOX_USE_HOST_NETWORK", () => {
    const result = runMain(["--port", "0"], { SANDBOX_USE_HOST_NETWORK: "true" })
    assert.strictEqual(result.status, 2)
    assert.strictEqual(
      result.stderr,
      "SANDBOX_USE_HOST_NETWORK is not supported by the runtime API: sandboxes would share ports.\n"
    )
  }, 60_000)

  it("refuses bad arguments with the usage", () => {
    const result = runMain(["--max-sandboxes", "0"])
    assert.strictEqual(result.status, 2)
    assert.strictEqual(result.stderr, `--max-sandboxes needs a positive integer, got 0\n${RUNTIME_API_USAGE}\n`)
  }, 60_000)

  it("refuses --provisioner kubernetes with a bad namespace, no cluster, or port-forwards without --proxy", () => {
    const badNamespace = runMain(["--port", "0", "--provisioner", "kubernetes", "--namespace", "Team_A", "--proxy"])
    assert.strictEqual(badNamespace.status, 2)
    assert.match(badNamespace.stderr, /^Invalid KubernetesRuntime options: namespace/)
    const noCluster = runMain(["--port", "0", "--provisioner", "kubernetes", "--proxy"], {
      KUBECONFIG: join(import.meta.dirname, "no-such-kubeconfig")
    })
    assert.strictEqual(noCluster.status, 2)
    assert.strictEqual(
      noCluster.stderr,
      `Cannot load the kubeconfig: ENOENT: no such file or directory, open '${
        join(import.meta.dirname, "no-such-kubeconfig")
      }'\n`
    )
    const noProxy = runMain(["--port", "0", "--provisioner", "kubernetes", "--kube-connect", "port-forward"])
    assert.strictEqual(noProxy.status, 2)
    assert.strictEqual(
      noProxy.stderr,
      "--provisioner kubernetes outside a cluster reaches pods through port-forwards of this process only: " +
        "add --proxy, so that clients reach them through this server.\n"
    )
  }, 60_000)

  it("parses every option, and names what is wrong", () => {
    assert.deepStrictEqual(
      parseRuntimeApiArgs([
        "--port",
        "9000",
        "--host",
        "::1",
        "--provisioner",
        "docker",
        "--proxy",
        "--public-url",
        "https://sandboxes.example/",
        "--vscode-domain",
        "ide.sandboxes.example",
        "--max-sandboxes",
        "20",
        "--idle-pause-after",
        "300",
        "--idle-stop-after",
        "3600.5",
        "--cpus",
        "0.5",
        "--memory-mb",
        "1024",
        "--container-name-prefix",
        "team-a",
        "--registry-prefix",
        "registry.local/team-a",
        "--build-concurrency",
        "3",
        "--build-timeout",
        "90.5",
        "--build-memory-mb",
        "512",
        "--build-cpus",
        "0.5",
        "--build-network",
        "builds",
        "--build-cgroup-parent",
        "builds.slice",
        "--build-max-upload-mb",
        "64",
        "--sandbox-uid",
        "81000"
      ]),
      {
        _tag: "Ok",
        args: {
          port: 9000,
          host: "::1",
          provisioner: "docker",
          proxy: true,
          publicUrl: "https://sandboxes.example/",
          vscodeDomain: "ide.sandboxes.example",
          maxSandboxes: 20,
          idlePauseAfterSeconds: 300,
          idleStopAfterSeconds: 3600.5,
          cpus: 0.5,
          memoryMb: 1024,
          sandboxUid: 81000,
          containerNamePrefix: "team-a",
          registryPrefix: "registry.local/team-a",
          buildConcurrency: 3,
          buildTimeoutSeconds: 90.5,
          buildMemoryMb: 512,
          buildCpus: 0.5,
          buildNetwork: "builds",
          buildCgroupParent: "builds.slice",
          buildMaxUploadMb: 64,
          namespace: undefined,
          kubeConnect: undefined,
          pvcStorageSize: undefined,
          pvcStorageClass: undefined,
          deleteWorkspace: false
        }
      }
    )
    const kubernetes = parseRuntimeApiArgs([
      "--provisioner",
      "kubernetes",
      "--namespace",
      "sandboxes",
      "--kube-connect",
      "port-forward",
      "--pvc-storage-size",
      "5Gi",
      "--pvc-storage-class",
      "fast",
      "--delete-workspace"
    ])
    assert.deepInclude(kubernetes._tag === "Ok" ? kubernetes.args : {}, {
      provisioner: "kubernetes",
      namespace: "sandboxes",
      kubeConnect: "portForward",
      pvcStorageSize: "5Gi",
      pvcStorageClass: "fast",
      deleteWorkspace: true
    })
    assert.strictEqual(refused(["--provisioner", "nomad"]), "unknown provisioner nomad (known: docker, kubernetes)")
    assert.strictEqual(refused(["--namespace", "x"]), "--namespace is an option of --provisioner kubernetes")
    assert.strictEqual(
      refused(["--provisioner", "kubernetes", "--kube-connect", "ingress"]),
      "--kube-connect is direct or port-forward, got ingress"
    )
    assert.strictEqual(refused(["--port", "70000"]), "invalid port: 70000")
    assert.strictEqual(refused(["--public-url", "ftp://x"]), "--public-url needs an http(s) URL, got ftp://x")
    assert.strictEqual(
      refused(["--vscode-domain", "*.Ide.example"]),
      "--vscode-domain needs a lower-case DNS name (its names' host is <label>.<domain>), got *.Ide.example"
    )
    assert.strictEqual(refused(["--memory-mb", "1.5"]), "--memory-mb needs a positive integer, got 1.5")
    assert.strictEqual(refused(["--host"]), "--host needs a value")
    // /build must not get Docker Hub's official images, nor the host's network, through an option.
    for (const prefix of ["docker.io", "docker.io/library/", "index.docker.io/library", "library"]) {
      assert.strictEqual(
        refused(["--registry-prefix", prefix]),
        `--registry-prefix ${prefix} would let /build replace Docker Hub's official images (debian, postgres, ...): ` +
          "choose a namespace of your own, such as effect-sandbox or registry.example/team",
        prefix
      )
    }
    assert.strictEqual(
      refused(["--build-network", "host"]),
      "--build-network host would give build steps the host's or a container's network"
    )
    assert.strictEqual(refused(["--build-concurrency", "0"]), "--build-concurrency needs a positive integer, got 0")
    assert.strictEqual(refused(["--verbose"]), "unrecognized argument: --verbose")
    assert.strictEqual(
      refused(["--idle-pause-after", "60", "--idle-stop-after", "30"]),
      "--idle-stop-after must be longer than --idle-pause-after"
    )
  })
})
