/**
 * The privileges of the runtime API's Kubernetes pods, read off the pod template the API sends:
 * with a `command` (OpenHands' way, the image's own user, root in OpenHands' image) every
 * capability dropped but a root command's few, never NET_RAW or NET_ADMIN, and no privilege
 * escalation; without one, KubernetesRuntime's pod, which keeps no capability at all.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { sandboxPod } from "../../src/runtimeApi/kubernetesPods.ts"
import { ROOT_CAPABILITIES } from "../../src/runtimeImage/capabilities.ts"
import { sandboxConfigFromEnv } from "../../src/schema/SandboxConfig.ts"

const containerOf = (command: ReadonlyArray<string> | undefined) =>
  Effect.map(sandboxConfigFromEnv, (sandbox) =>
    sandboxPod({
      request: { session_id: "s", ...(command === undefined ? {} : { command: [...command] }) },
      image: "img",
      labels: {},
      claimName: "pvc",
      keySecret: "secret",
      keySha256: "0".repeat(64),
      options: {},
      sandbox,
      user: { name: "openhands", id: 74289 },
      vscode: false
    }).template.spec!.containers[0]!)

describe("runtime API pods: capabilities", () => {
  it("a command pod keeps a root command's capabilities only, with no privilege escalation", () =>
    Effect.gen(function*() {
      const given = yield* containerOf(["python", "-m", "server"])
      assert.deepStrictEqual(given.securityContext, {
        privileged: false,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ["ALL"], add: [...ROOT_CAPABILITIES] }
      })
      assert.notInclude(ROOT_CAPABILITIES, "NET_RAW")
      assert.notInclude(ROOT_CAPABILITIES, "NET_ADMIN")
    }).pipe(Effect.runSync))

  it("our server's pod keeps none, and its container may not run as root", () =>
    Effect.gen(function*() {
      const ours = yield* containerOf(undefined)
      assert.deepStrictEqual(ours.securityContext, {
        privileged: false,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ["ALL"] },
        runAsNonRoot: true
      })
    }).pipe(Effect.runSync))
})
