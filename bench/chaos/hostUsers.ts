/**
 * Group host-users: what the other users of this host reach of a sandbox. A DockerRuntime sandbox
 * opens its workspace up (0777) and plants a set-uid, set-gid copy of `cat` in it; a throwaway
 * host account then tries to run the plant by every path to it (the host path, and through the
 * server's `/proc/<pid>/cwd` and `/proc/<pid>/root`), and host uid 1000 (the old sandbox uid,
 * OpenHands') tries to read the sandbox: every process's `/proc/<pid>/environ`, where a secret
 * is, and the workspace's file. Then the same read of an opened-up LocalRuntime workspace. Root
 * doing each first shows that every target is there.
 */
import { Context, Effect, Layer } from "effect"
import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { join } from "node:path"
import { DockerRuntime } from "../../src/docker.ts"
import { CmdOutputObservation, Runtime, type RuntimeShape } from "../../src/index.ts"
import { LocalRuntime } from "../../src/local.ts"
import {
  asHostUser,
  containerProcesses,
  deniedAccess,
  hostHas,
  mayActAsOtherUsers,
  throwawayHostUser
} from "../../test/hostUsers.ts"
import { baseImage } from "./ownerProcess.ts"
import { atLeast, atMost, type GroupContext, type Row } from "./rows.ts"

/** Host uid (and gid) 1000: the first login account of most hosts, and the old sandbox uid. */
const UID_1000 = 1000

/** Run `command` in the sandbox; a failure ends the group (its rows could not be measured). */
const run = (rt: RuntimeShape, command: string) =>
  rt.runCommand(command).pipe(
    Effect.flatMap((obs) =>
      obs instanceof CmdOutputObservation && obs.exitCode === 0
        ? Effect.void
        : Effect.die(new Error(`${command}: ${obs.content}`))
    )
  )

/** The runtime of `layer`, for the rest of the scope. */
const started = (layer: Layer.Layer<Runtime, unknown>) =>
  Layer.build(layer).pipe(Effect.map((context) => Context.get(context, Runtime)), Effect.orDie)

/** How many of `commands` ran, as uid and gid `id`. */
const ranAs = (id: { readonly uid: number; readonly gid: number }, commands: ReadonlyArray<ReadonlyArray<string>>) =>
  commands.filter((command) => !deniedAccess(asHostUser(id.uid, id.gid, command))).length

/**
 * What root must reach for the attempts to mean something: the plant by its 3 paths, the 3
 * workspace files, and the secret in the environments of at least docker-init, the server, the
 * shell and `sleep` (a process that comes and goes, such as a subshell, may add one).
 */
const MIN_TARGETS = 3 + 3 + 4

const root = { uid: 0, gid: 0 }
const uid1000 = { uid: UID_1000, gid: UID_1000 }

/** The Docker sandbox's targets, and who reached them. */
const dockerAttempts = Effect.gen(function*() {
  const secret = `chaos-secret-${randomBytes(8).toString("hex")}`
  const user = yield* throwawayHostUser
  const sessionId = `chaos-host-users-${randomBytes(5).toString("hex")}`
  const rt = yield* started(DockerRuntime.layer({ baseImage: baseImage(), sessionId, env: { CHAOS_SECRET: secret } }))
  yield* run(
    rt,
    "chmod 0777 /workspace && cp /bin/cat /workspace/planted && chmod 6755 /workspace/planted && " +
      "echo notes > /workspace/notes.txt && (sleep 600 &)"
  )
  const container = `effect-sandbox-${sessionId}`
  const processes = containerProcesses(container)
  const server = processes.find((p) => p.args.includes("--working-dir /workspace"))!
  const hostPath = spawnSync("docker", [
    "inspect",
    "--format",
    "{{range .Mounts}}{{if eq .Destination \"/workspace\"}}{{.Source}}{{end}}{{end}}",
    container
  ], { encoding: "utf8" }).stdout.trim()
  const plants = [hostPath, `/proc/${server.pid}/cwd`, `/proc/${server.pid}/root/workspace`].map((dir) => [
    join(dir, "planted"),
    "/etc/hostname"
  ])
  const reads = [
    ...processes.map((p) => ["grep", "-qa", secret, `/proc/${p.pid}/environ`]),
    ["cat", join(hostPath, "notes.txt")],
    ["cat", `/proc/${server.pid}/cwd/notes.txt`]
  ]
  return {
    reached: ranAs(root, plants) + ranAs(root, reads),
    plantsRun: ranAs(user, plants),
    reads: ranAs(uid1000, reads),
    heldIds: processes.filter((p) =>
      [...p.uids, ...p.gids].some((id) => hostHas("passwd", id) || hostHas("group", id))
    ).length
  }
})

/** An opened-up LocalRuntime workspace: whether root and uid 1000 read its file. */
const localAttempts = Effect.gen(function*() {
  const rt = yield* started(LocalRuntime.layer())
  yield* run(rt, "echo notes > notes.txt && chmod 0755 .")
  const read = [["cat", join(rt.info.workspace, "notes.txt")]]
  return { reached: ranAs(root, read), reads: ranAs(uid1000, read) }
})

export const hostUserRows = async (_: GroupContext): Promise<ReadonlyArray<Row>> => {
  if (!mayActAsOtherUsers()) return []
  const docker = await Effect.runPromise(Effect.scoped(dockerAttempts))
  const local = await Effect.runPromise(Effect.scoped(localAttempts))
  return [
    atLeast(
      "host-users: targets root reaches (the plant by 3 paths, 3 workspace files, environs holding the secret): coverage",
      docker.reached + local.reached,
      "targets",
      MIN_TARGETS
    ),
    atMost("host-users: Docker set-uid plant run by another host user (3 paths)", docker.plantsRun, "runs", 0),
    atMost("host-users: Docker sandbox read by host uid 1000 (environs, workspace)", docker.reads, "reads", 0),
    atMost("host-users: Docker sandbox processes holding a host account's uid or gid", docker.heldIds, "processes", 0),
    atMost("host-users: opened-up LocalRuntime workspace read by host uid 1000", local.reads, "reads", 0)
  ]
}
