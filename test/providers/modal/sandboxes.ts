/**
 * Modal sandboxes over Docker: a sandbox is a container of its image, running the create request's
 * `entrypoint_args` as root (Modal's default) with the environment its secret sources give, its resources as
 * the container's limits, and a tunnel per open port (tunnels.ts). Modal's clocks are real here:
 * `timeout_secs` ends the sandbox (TIMEOUT), `idle_timeout_secs` ends it once no tunnel connection
 * was open or used for that long (IDLE_TIMEOUT). An ended sandbox's container is removed at once,
 * its output kept for `AppFetchLogs` and its result for `SandboxWait`. While it runs, its command's
 * output is followed live for the task command router's `SandboxStdioReadV2` (stdio.ts).
 */
import { randomBytes } from "node:crypto"
import { containerOutput, docker, followOutput, removeContainer, STANDIN_LABEL } from "./docker.ts"
import { LiveOutput } from "./stdio.ts"
import { type Certificate, openTunnel, type Tunnel } from "./tunnels.ts"

/** GenericResult's statuses (modal.proto). */
export const STATUS = { success: 1, failure: 2, terminated: 3, timeout: 4, idleTimeout: 7 } as const

export interface GenericResult {
  readonly status: number
  readonly exception: string
  readonly exitcode: number
}

/** The create request's definition, as proto-loader decodes it (camelCase, defaults filled). */
export interface SandboxDefinition {
  readonly entrypointArgs: ReadonlyArray<string>
  readonly imageId: string
  readonly resources?: {
    readonly memoryMb: number
    readonly milliCpu: number
    readonly memoryMbMax: number
    readonly milliCpuMax: number
  } | null
  readonly timeoutSecs: number
  readonly idleTimeoutSecs?: number | null
  /** Unique among the app's running sandboxes (`fromName` finds it by it). */
  readonly name?: string | null
  readonly openPorts?:
    | { readonly ports: ReadonlyArray<{ readonly port: number; readonly unencrypted: boolean }> }
    | null
  /** Egress (1 OPEN, 2 BLOCKED, 3 ALLOWLIST): stored, not enforced (the container keeps the engine's network). */
  readonly networkAccess?: {
    readonly networkAccessType: number
    readonly allowedCidrs: ReadonlyArray<string>
    readonly allowedDomains: ReadonlyArray<string>
  } | null
}

export interface StandinSandbox {
  readonly id: string
  readonly appId: string
  readonly taskId: string
  readonly container: string
  /** Seconds since the epoch (SandboxInfo.created_at). */
  readonly createdAt: number
  readonly definition: SandboxDefinition
  tags: Record<string, string>
  readonly tunnels: ReadonlyArray<Tunnel>
  result: GenericResult | undefined
  output: { readonly stdout: string; readonly stderr: string }
  /** The command's output as it is printed, for the task command router's `SandboxStdioReadV2`. */
  readonly stdio: { readonly stdout: LiveOutput; readonly stderr: LiveOutput }
  /** Resolves with the result once the sandbox ended, whatever ended it. */
  readonly ended: Promise<GenericResult>
  /** When it ended (ms since the epoch). */
  endedAt: number | undefined
}

/** A V2 sandbox id: the SDK picks its calls by the id's shape, V1 for `sb-` and exactly 22 letters or digits. */
const sandboxId = () => `sb-${randomBytes(12).toString("hex")}`

export class Sandboxes {
  readonly byId = new Map<string, StandinSandbox>()
  private readonly timers = new Set<ReturnType<typeof setTimeout>>()
  /** Each running sandbox's `ended`, resolved by `finish`. */
  private readonly ending = new Map<string, (result: GenericResult) => void>()
  private readonly instance: string
  private readonly certificate: Certificate

  constructor(instance: string, certificate: Certificate) {
    this.instance = instance
    this.certificate = certificate
  }

  /** Start a sandbox of `image` (an image on the engine) with `env`. */
  async create(input: {
    readonly appId: string
    readonly image: string
    readonly env: Readonly<Record<string, string>>
    readonly definition: SandboxDefinition
    readonly tags: Record<string, string>
  }): Promise<StandinSandbox> {
    const { definition } = input
    const id = sandboxId()
    const memoryMb = definition.resources?.memoryMbMax || definition.resources?.memoryMb || 0
    const milliCpu = definition.resources?.milliCpuMax || definition.resources?.milliCpu || 0
    const container = await docker.createContainer({
      name: `modal-standin-${this.instance}-${id}`,
      Image: input.image,
      Entrypoint: [],
      // Without a command a Modal sandbox sleeps until its timeout.
      Cmd: definition.entrypointArgs.length > 0 ? [...definition.entrypointArgs] : ["sleep", "infinity"],
      User: "root",
      Env: Object.entries(input.env).map(([k, v]) => `${k}=${v}`),
      Labels: { [STANDIN_LABEL]: this.instance, [`${STANDIN_LABEL}.sandbox`]: id },
      HostConfig: {
        Init: true,
        ...(memoryMb > 0 ? { Memory: memoryMb * 1024 * 1024 } : {}),
        ...(milliCpu > 0 ? { NanoCpus: milliCpu * 1e6 } : {})
      }
    })
    await container.start()
    const stdio = { stdout: new LiveOutput(), stderr: new LiveOutput() }
    // Followed from the start (the engine's log holds what came before the follow began).
    followOutput(container.id, stdio).catch(() => {
      stdio.stdout.end()
      stdio.stderr.end()
    })
    const ip = Object.values((await container.inspect()).NetworkSettings.Networks)[0]?.IPAddress ?? ""
    let lastActive = Date.now()
    const touched = () => void (lastActive = Date.now())
    const tunnels = await Promise.all(
      (definition.openPorts?.ports ?? []).map((spec) => openTunnel(this.certificate, ip, spec.port, touched))
    )
    const sandbox: StandinSandbox = {
      id,
      appId: input.appId,
      taskId: `ta-${randomBytes(11).toString("hex")}`,
      container: container.id,
      createdAt: Date.now() / 1000,
      definition,
      tags: { ...input.tags },
      tunnels,
      result: undefined,
      output: { stdout: "", stderr: "" },
      stdio,
      ended: new Promise((resolve) => this.ending.set(id, resolve)),
      endedAt: undefined
    }
    this.byId.set(id, sandbox)
    const finish = (result: GenericResult) => this.finish(sandbox, result)
    // The command's own exit.
    container.wait().then(
      (exit: { StatusCode: number }) =>
        finish({
          status: exit.StatusCode === 0 ? STATUS.success : STATUS.failure,
          exception: "",
          exitcode: exit.StatusCode
        }),
      () => {}
    )
    this.after(
      definition.timeoutSecs * 1000,
      () => finish({ status: STATUS.timeout, exception: "Sandbox timed out", exitcode: 0 })
    )
    const idleMs = (definition.idleTimeoutSecs ?? 0) * 1000
    if (idleMs > 0) {
      const check = () => {
        if (sandbox.result !== undefined) return
        if (tunnels.some((t) => t.open() > 0)) touched()
        if (Date.now() - lastActive >= idleMs) {
          void finish({ status: STATUS.idleTimeout, exception: "Sandbox idle timeout", exitcode: 0 })
        } else this.after(250, check)
      }
      this.after(250, check)
    }
    return sandbox
  }

  private after(ms: number, run: () => void) {
    const timer = setTimeout(() => {
      this.timers.delete(timer)
      run()
    }, ms)
    this.timers.add(timer)
  }

  /**
   * End a sandbox with `result` (the first ending wins): its output kept when its command exited
   * by itself, its tunnels closed and its container removed.
   */
  private async finish(sandbox: StandinSandbox, result: GenericResult) {
    if (sandbox.result !== undefined) return
    sandbox.result = result
    if (result.status === STATUS.success || result.status === STATUS.failure) {
      sandbox.output = await containerOutput(sandbox.container).catch(() => sandbox.output)
    }
    sandbox.endedAt = Date.now()
    sandbox.stdio.stdout.end()
    sandbox.stdio.stderr.end()
    await Promise.all(sandbox.tunnels.map((t) => t.close()))
    await removeContainer(sandbox.container)
    this.ending.get(sandbox.id)?.(result)
    this.ending.delete(sandbox.id)
  }

  /**
   * Terminate (SandboxTerminate): the result it had before, if it had ended. Answered once the
   * container is gone, also when the sandbox was already ending on its own (its exit seen, its
   * removal under way): a terminate must not return while that removal still runs.
   */
  async terminate(sandbox: StandinSandbox): Promise<GenericResult | undefined> {
    const before = sandbox.result
    await this.finish(sandbox, { status: STATUS.terminated, exception: "Sandbox terminated", exitcode: 0 })
    await sandbox.ended
    return before
  }

  /**
   * End a sandbox as Modal does on its own: its idle timeout (IDLE_TIMEOUT, exit code 0), or an
   * eviction for its memory (TERMINATED, the exception saying why).
   */
  end(sandbox: StandinSandbox, why: "idle-timeout" | "out-of-memory"): Promise<void> {
    return this.finish(
      sandbox,
      why === "idle-timeout"
        ? { status: STATUS.idleTimeout, exception: "Sandbox idle timeout", exitcode: 0 }
        : { status: STATUS.terminated, exception: "Sandbox ran out of memory (OOM) and was terminated", exitcode: 137 }
    )
  }

  /** Stop every clock and end every sandbox (the stand-in's close). */
  async closeAll() {
    for (const timer of this.timers) clearTimeout(timer)
    this.timers.clear()
    await Promise.all([...this.byId.values()].map((sandbox) => this.terminate(sandbox)))
  }
}
