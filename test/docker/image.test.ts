/**
 * The runtime image: built once per base image and reused, skipped entirely when
 * `sandbox.runtimeContainerImage` names one, and refused with a message saying
 * what is missing when the base image cannot host the sandbox.
 */
import { afterAll, assert, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { RuntimeStartError, SandboxConfig } from "../../src/index.ts"
import {
  assertNoContainer,
  buildLogged,
  containerName,
  dockerCli,
  dockerLayer,
  inspect,
  refusedStart,
  removeLeftovers,
  sessionId,
  sh,
  startError
} from "./helpers.ts"
import { baseImage, describeDocker } from "./infra.ts"

const BUILDING = "building runtime image"

/**
 * A base image without bash, cached by the base image's id: the Debian base with
 * /usr/bin/bash deleted (bookworm's /bin is /usr/bin). It has /bin/sh (dash), so
 * the preflight runs and reports the first thing the image lacks.
 */
const imageWithoutBash = (base: string): string => {
  const baseId = dockerCli("image", "inspect", "-f", "{{.Id}}", base).stdout.trim().replace("sha256:", "").slice(0, 12)
  const tag = `effect-sandbox-test/no-bash:${baseId}`
  if (dockerCli("image", "inspect", tag).status === 0) return tag
  const name = `effect-sandbox-test-no-bash-${process.pid}`
  const steps = [
    ["create", "--name", name, "--user", "root", base, "/bin/sh", "-c", "rm -f /usr/bin/bash /bin/bash"],
    ["start", "-a", name],
    ["commit", "--change", "CMD [\"/bin/sh\"]", name, tag]
  ]
  try {
    for (const step of steps) {
      const result = dockerCli(...step)
      if (result.status !== 0) throw new Error(`docker ${step[0]} failed: ${result.stderr}`)
    }
  } finally {
    dockerCli("rm", "-f", name)
  }
  return tag
}

describeDocker("DockerRuntime image", () => {
  const image = baseImage()
  afterAll(() => removeLeftovers("img"))

  it.live("is built once per base image and reused by the next runtime", () =>
    Effect.gen(function*() {
      // A forced rebuild (all steps cached) proves the build is visible in the log.
      const first = sessionId("img")
      const built = yield* buildLogged(
        dockerLayer(image, { sessionId: first, sandbox: new SandboxConfig({ forceRebuildRuntime: true }) })
      )
      assert.isTrue(built.lines.some((line) => line.includes(BUILDING)), built.lines.join("\n"))
      const buildingStatuses = yield* built.rt.status.pipe(Stream.take(4), Stream.runCollect)
      assert.deepStrictEqual(buildingStatuses, ["STARTING_RUNTIME", "BUILDING_RUNTIME", "RUNTIME_STARTED", "READY"])
      const firstInfo = (yield* inspect(containerName(first)))!
      yield* built.release
      assertNoContainer(first)

      const second = sessionId("img")
      const reused = yield* buildLogged(dockerLayer(image, { sessionId: second }))
      assert.deepStrictEqual(reused.lines.filter((line) => line.includes(BUILDING)), [])
      // The stream replays the whole start: no BUILDING_RUNTIME when the image was reused.
      const seen = yield* reused.rt.status.pipe(Stream.take(3), Stream.runCollect)
      assert.deepStrictEqual(seen, ["STARTING_RUNTIME", "RUNTIME_STARTED", "READY"])
      const secondInfo = (yield* inspect(containerName(second)))!
      assert.strictEqual(secondInfo.Image, firstInfo.Image)
      assert.strictEqual(secondInfo.Config.Image, firstInfo.Config.Image)
      assert.match(secondInfo.Config.Image, /^effect-sandbox-runtime:[0-9a-f]{16}$/)
      // The image carries its own tag as a label, and no superseded build of the tag (untagged,
      // still labelled) is left. Images built FROM it elsewhere inherit the label but keep tags.
      const label = `effect-sandbox.runtime-image=${secondInfo.Config.Image}`
      const own = dockerCli("image", "inspect", "-f", "{{json .Config.Labels}}", secondInfo.Config.Image).stdout
      assert.strictEqual(JSON.parse(own)["effect-sandbox.runtime-image"], secondInfo.Config.Image)
      const superseded = dockerCli("images", "-q", "--filter", `label=${label}`, "--filter", "dangling=true").stdout
      assert.strictEqual(superseded.trim(), "")
      assert.strictEqual((yield* sh(reused.rt, "echo reused")).content, "reused")
      // The build booted the server once as the sandbox user: V8's compile cache of that boot is in
      // the image, for that uid (runtimeImage/imageContext.ts); the server keeps its variable from the shells.
      const cache = yield* sh(
        reused.rt,
        "ls /opt/effect-sandbox/compile-cache/*-$(id -u) | grep -c . ; echo ${EFFECT_SANDBOX_COMPILE_CACHE-unset}"
      )
      const [entries, variable] = cache.content.split("\n")
      assert.isAbove(Number(entries), 0, cache.content)
      assert.strictEqual(variable, "unset")
      yield* reused.release
      assertNoContainer(second)
    }), 120_000)

  it.live("sandbox.runtimeContainerImage skips the build entirely", () =>
    Effect.gen(function*() {
      // The image of an ordinary runtime, then a runtime on it whose base image does not even exist.
      const probe = sessionId("img")
      const { release, rt: probeRt } = yield* buildLogged(dockerLayer(image, { sessionId: probe }))
      const runtimeImage = (yield* inspect(containerName(probe)))!.Config.Image
      assert.strictEqual((yield* sh(probeRt, "echo probe")).content, "probe")
      yield* release
      assertNoContainer(probe)

      const session = sessionId("img")
      const given = yield* buildLogged(
        dockerLayer(`effect-sandbox-test/absent:${session}`, {
          sessionId: session,
          sandbox: new SandboxConfig({ runtimeContainerImage: runtimeImage })
        })
      )
      assert.deepStrictEqual(given.lines.filter((line) => line.includes(BUILDING)), [])
      assert.strictEqual((yield* inspect(containerName(session)))!.Config.Image, runtimeImage)
      assert.strictEqual((yield* sh(given.rt, "echo given")).content, "given")
      yield* given.release
      assertNoContainer(session)
    }), 120_000)

  it.live(
    "a base image without bash is refused with a RuntimeStartError naming /bin/bash",
    () =>
      Effect.gen(function*() {
        const noBash = imageWithoutBash(image)
        const message = yield* refusedStart("img", (session) => dockerLayer(noBash, { sessionId: session }))
        assert.include(message, "/bin/bash")
        assert.include(message, `The base image ${noBash} cannot host the sandbox`)
      }),
    120_000
  )

  it.live(
    "a missing base image tag is a RuntimeStartError saying what an installed user can do (no repository script)",
    () =>
      Effect.gen(function*() {
        const missing = `effect-sandbox-test/missing:${process.pid}`
        const session = sessionId("img")
        const error = yield* startError(dockerLayer(missing, { sessionId: session }))
        assert.instanceOf(error, RuntimeStartError)
        const { message } = error
        // As data: the engine has no such image (its 404), before any container was made.
        assert.strictEqual(error.reason, "provider")
        assert.strictEqual(error.provider?.reason, "image-missing")
        assert.strictEqual(error.provider?.status, 404)
        assertNoContainer(session)
        // Pulled first (which fails here: test/docker/startProgress.test.ts has the whole message).
        assert.isTrue(
          message.startsWith(`The base image ${missing} is not on this engine and could not be pulled (`),
          message
        )
        assert.include(message, "any glibc image with bash will do.")
        assert.notInclude(message, "npm run")
      }),
    60_000
  )
})
