/**
 * What other users of the Docker host can reach of a sandbox. Without user namespaces the
 * container's processes and files carry host uids: the sandbox runs as a uid and gid that no
 * account of the host has, so no host user is the sandbox (not uid 1000, the old default and
 * OpenHands'); its temporary workspace sits in a directory only the owner can enter, so a
 * set-uid binary the sandbox plants there is out of every other host user's reach.
 */
import { afterAll, assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { rmSync, statSync } from "node:fs"
import { dirname, join } from "node:path"
import { SandboxConfig } from "../../src/index.ts"
import { workspaceParentPath } from "../../src/runtime/hostWorkspace.ts"
import { DEFAULT_SANDBOX_UID } from "../../src/runtimeImage/sandboxUser.ts"
import {
  asHostUser,
  containerProcesses,
  deniedAccess,
  hostHas,
  mayActAsOtherUsers,
  throwawayHostUser
} from "../hostUsers.ts"
import {
  assertNoContainer,
  buildRuntime,
  containerName,
  dockerCli,
  dockerLayer,
  hostWorkspace,
  refusedStart,
  removeLeftovers,
  sessionId,
  sh
} from "./helpers.ts"
import { baseImage, describeDocker } from "./infra.ts"

const actAsOthers = mayActAsOtherUsers()

/**
 * The base image with a user `openhands` of uid 1000, as an image made for OpenHands has (cached
 * by the base image's id).
 */
const imageWithOpenHandsUser = (base: string): string => {
  const baseId = dockerCli("image", "inspect", "-f", "{{.Id}}", base).stdout.trim().replace("sha256:", "").slice(0, 12)
  const tag = `effect-sandbox-test/openhands-1000:${baseId}`
  if (dockerCli("image", "inspect", tag).status === 0) return tag
  const built = spawnSync("docker", ["build", "-q", "-t", tag, "-"], {
    input: `FROM ${base}\nRUN useradd --no-log-init --uid 1000 openhands\n`,
    encoding: "utf8",
    env: { ...process.env, DOCKER_BUILDKIT: "0" }
  })
  if (built.status !== 0) throw new Error(`docker build ${tag} failed: ${built.stderr}`)
  return tag
}

describeDocker("DockerRuntime and the host's other users", () => {
  const image = baseImage()
  afterAll(() => removeLeftovers("hostusers"))

  it.live.skipIf(!actAsOthers)(
    "the sandbox's processes run as a uid and gid no host account has; host uid 1000 reads neither the server's environment nor the workspace",
    () =>
      Effect.gen(function*() {
        const session = sessionId("hostusers")
        const canary = `canary-${randomBytes(8).toString("hex")}`
        const { release, rt } = yield* buildRuntime(dockerLayer(image, { sessionId: session, env: { CANARY: canary } }))
        assert.strictEqual((yield* sh(rt, "echo secret > /workspace/notes.txt && sleep 600 &")).exitCode, 0)
        const processes = containerProcesses(containerName(session))
        assert.isAtLeast(processes.length, 3, "docker-init, the server and the shell")
        const server = processes.find((p) => p.args.includes("--working-dir /workspace"))!
        const environ = `/proc/${server.pid}/environ`
        const notes = join(yield* hostWorkspace(session), "notes.txt")
        // What an attacker would read: there as root.
        assert.include(asHostUser(0, 0, ["cat", environ]).stdout, canary)
        assert.strictEqual(asHostUser(0, 0, ["cat", notes]).stdout, "secret\n")
        // Uid 1000 (the old sandbox uid, OpenHands') with its group: refused.
        const environRead = asHostUser(1000, 1000, ["cat", environ])
        assert.isTrue(deniedAccess(environRead), `uid 1000 read the server's environment: ${environRead.stdout}`)
        const workspaceRead = asHostUser(1000, 1000, ["cat", notes])
        assert.isTrue(deniedAccess(workspaceRead), `uid 1000 read the workspace: ${workspaceRead.stdout}`)
        // What stops it: every process of the sandbox holds only a uid and gid no host account has.
        for (const p of processes) {
          assert.deepStrictEqual(new Set([...p.uids, ...p.gids]), new Set([DEFAULT_SANDBOX_UID]), p.args)
        }
        assert.isFalse(hostHas("passwd", DEFAULT_SANDBOX_UID), "a host account has the sandbox uid")
        assert.isFalse(hostHas("group", DEFAULT_SANDBOX_UID), "a host group has the sandbox gid")
        yield* release
        assertNoContainer(session)
      }),
    120_000
  )

  it.live(
    "a stopped kept container made for another uid (OpenHands' 1000, or before this default) restarts with its key file its own user's",
    () =>
      Effect.gen(function*() {
        const session = sessionId("hostusers")
        const kept = yield* buildRuntime(dockerLayer(image, {
          sessionId: session,
          userId: 1000,
          sandbox: new SandboxConfig({ keepRuntimeAlive: true })
        }))
        const workspace = yield* hostWorkspace(session)
        yield* kept.release
        dockerCli("stop", "-t", "1", containerName(session))
        // This layer's own uid is the default: the container's server still runs as 1000.
        const attached = yield* buildRuntime(dockerLayer(image, { sessionId: session }))
        assert.strictEqual((yield* sh(attached.rt, "id -u")).content, "1000")
        yield* attached.release
        assertNoContainer(session)
        rmSync(workspace, { recursive: true, force: true })
      }),
    90_000
  )

  it.live(
    "a base image whose `openhands` has another uid is refused by the preflight, naming userId",
    () =>
      Effect.gen(function*() {
        const base = imageWithOpenHandsUser(image)
        const message = yield* refusedStart("hostusers", (session) => dockerLayer(base, { sessionId: session }))
        assert.strictEqual(
          message,
          `The base image ${base} cannot host the sandbox: the base image's user openhands has uid 1000, not ` +
            `${DEFAULT_SANDBOX_UID}: give userId that uid, or another username.`
        )
      }),
    120_000
  )

  it.live.skipIf(!actAsOthers)(
    "a set-uid binary the sandbox plants in its opened-up workspace is out of another host user's reach",
    () =>
      Effect.gen(function*() {
        const session = sessionId("hostusers")
        const user = yield* throwawayHostUser
        const { release, rt } = yield* buildRuntime(dockerLayer(image, { sessionId: session }))
        const plant = yield* sh(
          rt,
          "chmod 0777 /workspace && cp /bin/cat /workspace/planted && chmod 6755 /workspace/planted"
        )
        assert.strictEqual(plant.exitCode, 0, plant.content)
        const workspace = yield* hostWorkspace(session)
        const planted = join(workspace, "planted")
        // The plant is real: set-uid and set-gid, of the sandbox's uid and gid, in a world-open directory.
        const stat = statSync(planted)
        assert.strictEqual(stat.mode & 0o6000, 0o6000)
        assert.deepStrictEqual([stat.uid, stat.gid], [DEFAULT_SANDBOX_UID, DEFAULT_SANDBOX_UID])
        assert.strictEqual(statSync(workspace).mode & 0o777, 0o777)

        const run = asHostUser(user.uid, user.gid, [planted, "/etc/hostname"])
        assert.isTrue(deniedAccess(run), `${user.name} ran the planted binary: ${run.stdout}${run.stderr}`)
        const list = asHostUser(user.uid, user.gid, ["ls", workspace])
        assert.isTrue(deniedAccess(list), `${user.name} listed the workspace: ${list.stdout}`)
        // What stops them: around the workspace, the owner's directory, mode 0700.
        const parent = statSync(dirname(workspace))
        assert.strictEqual(dirname(workspace), workspaceParentPath())
        assert.deepStrictEqual([parent.mode & 0o777, parent.uid], [0o700, process.getuid!()])
        yield* release
        assertNoContainer(session)
      }),
    120_000
  )
})
