/**
 * ModalRuntime's start failures through the real `modal` SDK against the stand-in, each with its
 * message, its reason as data and nothing left behind: a bad token pair (unauthorized), a missing
 * image (image-missing), an image without the payload (the server exited: the launcher's line read
 * back from the sandbox's logs, its exit code), rate-limited creates retried and then refused
 * (rate-limited), and options refused before anything is made.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Redacted, Schedule } from "effect"
import { InvalidOptionsError, type ProviderReason, RuntimeStartError } from "../../../src/index.ts"
import { ModalRuntime, type ModalRuntimeOptions } from "../../../src/modal.ts"
import { buildRuntime, startError } from "../../docker/helpers.ts"
import { describeDocker } from "../../docker/infra.ts"
import { standinOptions, useModalStandin } from "./fixture.ts"

/** A start error made of Modal's refusal, for `reason`, with the status Modal answered with (if any). */
const assertRefused = (
  error: RuntimeStartError | InvalidOptionsError,
  reason: ProviderReason,
  status?: number
) => {
  assert.strictEqual(error._tag === "RuntimeStartError" && error.reason, "provider")
  const provider = (error as RuntimeStartError).provider
  assert.deepStrictEqual([provider?.provider, provider?.reason, provider?.status], ["Modal", reason, status])
  assert.strictEqual(provider?.message, error.message)
}

describeDocker("ModalRuntime start (stand-in)", () => {
  const standinOf = useModalStandin()

  const creates = () => standinOf().calls.filter((c) => c.method === "SandboxCreateV2").length

  /** The start's error message, once the stand-in holds no container. */
  const refusal = (options: ModalRuntimeOptions) =>
    Effect.gen(function*() {
      const error = yield* startError(ModalRuntime.layer(standinOptions(standinOf(), options)))
      assert.deepStrictEqual(yield* Effect.promise(() => standinOf().containers()), [])
      return error as RuntimeStartError | InvalidOptionsError
    })

  it.live("a bad token pair is Modal's UNAUTHENTICATED text, before any sandbox", () =>
    Effect.gen(function*() {
      const before = creates()
      const error = yield* refusal({ tokenSecret: Redacted.make("as-wrong") })
      assert.instanceOf(error, RuntimeStartError)
      assert.strictEqual(
        error.message,
        "Modal could not look up app effect-sandbox: Token ID or secret is invalid. Create a new token with " +
          "`modal token new`."
      )
      assertRefused(error, "unauthorized", 401)
      assert.strictEqual(creates(), before)
    }))

  it.live("no token at all is an InvalidOptionsError naming the variable", () =>
    Effect.gen(function*() {
      const saved = process.env["MODAL_TOKEN_ID"]
      delete process.env["MODAL_TOKEN_ID"]
      const { tokenId: _, ...rest } = standinOptions(standinOf())
      const error = yield* startError(ModalRuntime.layer(rest)).pipe(
        Effect.ensuring(Effect.sync(() => saved === undefined || (process.env["MODAL_TOKEN_ID"] = saved)))
      )
      assert.instanceOf(error, InvalidOptionsError)
      assert.strictEqual(
        (error as InvalidOptionsError).message,
        "ModalRuntime options: no tokenId given and MODAL_TOKEN_ID is not set (a Modal token: `modal token new`, " +
          "or the dashboard's API tokens)."
      )
    }))

  it.live("an image that was never published is Modal's NOT_FOUND text", () =>
    Effect.gen(function*() {
      const error = yield* refusal({ image: "no-such-image" })
      assert.strictEqual(
        error.message,
        "Modal could not look up image no-such-image: Could not find published image 'no-such-image:latest'"
      )
      assertRefused(error, "image-missing")
    }))

  it.live("a registry image Modal cannot pull is the build's failure", () =>
    Effect.gen(function*() {
      const error = yield* refusal({ registryImage: "registry.invalid/no-such:1" })
      assert.match(
        error.message,
        /^Modal could not look up image registry\.invalid\/no-such:1: Image build for im-\w+ failed with the exception:\npull access denied for registry\.invalid\/no-such:1: repository does not exist$/
      )
      assertRefused(error, "image-missing")
    }))

  it.live(
    "an image without the payload ends its sandbox at once (the server exited: its code and output, read once Modal has the logs), saying what it lacks; nothing is left",
    () =>
      Effect.gen(function*() {
        // Modal's logs may land after the end (here a second later): the start waits for them.
        standinOf().lateLogsMs = 1000
        const error = yield* refusal({ image: "base" }).pipe(
          Effect.ensuring(Effect.sync(() => standinOf().lateLogsMs = 0))
        )
        assert.instanceOf(error, RuntimeStartError)
        const sandbox = [...standinOf().sandboxes.values()].at(-1)!
        const lacks =
          "effect-sandbox: this image has no /opt/effect-sandbox/bin/node: make it from the runtime image " +
          "(docs/runtimes/modal.md, \"Making the image\")"
        assert.strictEqual(
          error.message,
          `The action server in Modal sandbox ${sandbox.id} exited with code 78 before it answered. Its last output:\n` +
            lacks
        )
        const { reason, exitCode, output } = error as RuntimeStartError
        assert.deepStrictEqual([reason, exitCode, output?.trim()], ["server-exited", 78, lacks])
      }),
    120_000
  )

  it.live("rate-limited creates are retried with the schedule until one is let through", () =>
    Effect.gen(function*() {
      const before = creates()
      standinOf().refuseCreates(2, "Sandbox creation rate limit exceeded, please retry later")
      const quick = Schedule.spaced("10 millis").pipe(Schedule.upTo({ times: 3 }))
      const { rt, release } = yield* buildRuntime(
        ModalRuntime.layer(standinOptions(standinOf(), { providerRetry: quick }))
      )
      assert.strictEqual((yield* rt.runCommand("echo started")).content.trim(), "started")
      yield* release
      assert.strictEqual(creates() - before, 3)
      assert.deepStrictEqual(yield* Effect.promise(() => standinOf().containers()), [])
    }), 120_000)

  it.live("creates still refused after the retries are Modal's RESOURCE_EXHAUSTED text", () =>
    Effect.gen(function*() {
      const before = creates()
      standinOf().refuseCreates(5, "Sandbox creation rate limit exceeded, please retry later")
      const error = yield* refusal({ providerRetry: Schedule.spaced("10 millis").pipe(Schedule.upTo({ times: 1 })) })
      standinOf().refuseCreates(0, "")
      assert.strictEqual(
        error.message,
        "Modal could not create a sandbox from image effect-sandbox-runtime: Sandbox creation rate limit exceeded, " +
          "please retry later"
      )
      assertRefused(error, "rate-limited", 429)
      assert.strictEqual(creates() - before, 2)
    }))

  it.live("options Modal would refuse are InvalidOptionsErrors, and nothing is called", () =>
    Effect.gen(function*() {
      const calls = standinOf().calls.length
      const messages = yield* Effect.forEach(
        [
          { idleTimeout: "2500 millis" },
          { lifetime: "1500 millis" },
          { lifetime: "0 seconds" },
          { user: "openhands" },
          { image: "effect-sandbox-runtime", registryImage: "effect-sandbox-runtime:x" },
          { cpus: -1 }
        ] satisfies Array<ModalRuntimeOptions>,
        (options) => Effect.map(refusal(options), (e) => e.message)
      )
      assert.deepStrictEqual(messages, [
        "ModalRuntime options: idleTimeout must be whole seconds, at least 3 (Modal counts in seconds).",
        "ModalRuntime options: lifetime must be whole seconds, at least 1 (Modal counts in seconds).",
        "ModalRuntime options: lifetime must be positive.",
        "ModalRuntime options: user: a Modal sandbox's command runs as root.",
        "ModalRuntime options: give image (a published Modal image) or registryImage, not both.",
        "ModalRuntime options: cpus and memoryMiB must be positive."
      ])
      // A start's first calls (the SDK's token, the app's look-up), none of them: any other call
      // now is an earlier test's (its reaper pass, interrupted with its layer, can reach the
      // stand-in after that test ended).
      const started = standinOf().calls.slice(calls).filter((c) =>
        ["AuthTokenGet", "AppGetOrCreate"].includes(c.method)
      )
      assert.deepStrictEqual(started, [])
    }))
})
