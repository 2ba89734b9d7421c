/**
 * The kubelet (and scheduler) of the stand-in: each pod is one Docker container
 * on the default bridge network, and its status moves the way a kubelet moves it:
 * PodScheduled (or Unschedulable: a PVC missing or not yet bound, a nodeSelector
 * no node matches, no room while `capacity` is held), Pending with
 * ErrImagePull/ImagePullBackOff when the image is not on the engine (the stand-in
 * never pulls) or once after `failNextPull`, Running with
 * the container's bridge IP as podIP, Ready from the httpGet readiness probe,
 * CrashLoopBackOff after an exit under restartPolicy Always, OOMKilled (137)
 * when Docker reports an OOM kill. Back-offs and probe periods are shortened
 * (at most 5 s and `probePeriodMs`) so tests run in seconds, not minutes.
 */
import type { V1Container, V1PodSpec, V1Volume } from "@kubernetes/client-node"
import type Dockerode from "dockerode"
import { setTimeout as sleep } from "node:timers/promises"
import type { Admission } from "./admission.ts"
import { ContainerConfigError, resolveEnv, securityOptions, unsupportedEnv } from "./containerConfig.ts"
import { docker, dockerName, labelsOf, quantity } from "./docker.ts"
import { NODE_NAME, recordEvent } from "./events.ts"
import { Gate } from "./gate.ts"
import { probeOnce, unsupportedProbe } from "./probes.ts"
import { PersistentVolumeClaims, Pods } from "./resources.ts"
import { badRequest, invalid } from "./status.ts"
import { type KObject, type NewObject, now, type Store } from "./store.ts"
import type { Volumes } from "./volumes.ts"

/** The labels of the stand-in's one node (what a pod's nodeSelector is matched against). */
const NODE_LABELS: Record<string, string> = { "kubernetes.io/hostname": NODE_NAME, "kubernetes.io/os": "linux" }

/** `failNextPull`'s every image. */
const ANY_IMAGE = "*"

const pause = (ms: number, signal: AbortSignal) => sleep(ms, undefined, { signal }).catch(() => {})

/** Back-off before retry `attempt` (1, 2, 4 s, capped at 5 s; a kubelet uses 10 s doubling to 5 min). */
const backoff = (attempt: number) => Math.min(1000 * 2 ** attempt, 5000)

const condition = (type: string, status: boolean, reason?: string, message?: string) => ({
  type,
  status: status ? "True" : "False",
  lastProbeTime: null,
  lastTransitionTime: now(),
  ...(reason === undefined ? {} : { reason }),
  ...(message === undefined ? {} : { message })
})

interface Condition {
  readonly type: string
  readonly status: string
  readonly lastTransitionTime: string
}

/** Set conditions, keeping the transition time of those whose status did not change. */
const withConditions = (current: ReadonlyArray<Condition> | undefined, next: ReadonlyArray<Condition>) =>
  next.map((wanted) => {
    const before = current?.find((c) => c.type === wanted.type)
    return before?.status === wanted.status ? { ...wanted, lastTransitionTime: before.lastTransitionTime } : wanted
  })

const readiness = (ready: boolean, container: string, reason = "ContainersNotReady") => [
  condition("PodScheduled", true),
  condition("Initialized", true),
  ready
    ? condition("ContainersReady", true)
    : condition("ContainersReady", false, reason, `containers with unready status: [${container}]`),
  ready ? condition("Ready", true) : condition("Ready", false, reason, `containers with unready status: [${container}]`)
]

/** 422 for a pod the stand-in cannot run faithfully (rather than running it differently). */
const validatePod = (body: NewObject) => {
  const name = body.metadata?.name ?? body.metadata?.generateName ?? ""
  const spec = body.spec as V1PodSpec | undefined
  const fail = (field: string, message: string) => invalid("Pod", name, field, message)
  if (spec?.containers === undefined || spec.containers.length === 0) throw fail("spec.containers", "Required value")
  if (spec.containers.length > 1 || (spec.initContainers?.length ?? 0) > 0) {
    throw fail("spec.containers", "Too many: the stand-in runs pods of exactly one container")
  }
  const container = spec.containers[0]!
  if (!container.image) throw fail("spec.containers[0].image", "Required value")
  if (container.securityContext?.privileged === true) {
    throw fail(
      "spec.containers[0].securityContext.privileged",
      "Forbidden: the stand-in never runs privileged containers"
    )
  }
  for (const [index, env] of (container.env ?? []).entries()) {
    const unsupported = unsupportedEnv(env)
    if (unsupported !== undefined) throw fail(`spec.containers[0].env[${index}].valueFrom`, unsupported)
  }
  if ((container.envFrom?.length ?? 0) > 0) {
    throw fail("spec.containers[0].envFrom", "Unsupported value: no envFrom in the stand-in")
  }
  const probe = unsupportedProbe(container.readinessProbe)
  if (probe !== undefined) throw fail("spec.containers[0].readinessProbe", probe)
  for (const volume of spec.volumes ?? []) {
    if (volume.persistentVolumeClaim === undefined && volume.emptyDir === undefined) {
      throw fail(
        `spec.volumes[${volume.name}]`,
        "Unsupported value: the stand-in mounts persistentVolumeClaim and emptyDir volumes only"
      )
    }
  }
  for (const mount of container.volumeMounts ?? []) {
    if (!spec.volumes?.some((volume) => volume.name === mount.name)) {
      throw fail("spec.containers[0].volumeMounts.name", `Not found: "${mount.name}"`)
    }
    if (mount.subPath !== undefined) {
      throw fail("spec.containers[0].volumeMounts.subPath", "Unsupported value: no subPath in the stand-in")
    }
  }
}

/** Docker's multiplexed log stream (8-byte frame headers: stream, 0, 0, 0, size) as plain text. */
const demultiplex = (buffer: Buffer): string => {
  const chunks: Array<Buffer> = []
  for (let at = 0; at + 8 <= buffer.length; at += 8 + buffer.readUInt32BE(at + 4)) {
    chunks.push(buffer.subarray(at + 8, at + 8 + buffer.readUInt32BE(at + 4)))
  }
  return Buffer.concat(chunks).toString("utf8")
}

interface Run {
  readonly abort: AbortController
  container?: Dockerode.Container
  readonly emptyDirs: Array<string>
  /** Settles when the pod's loop has stopped (after an abort, once its container is removed). */
  done: Promise<void>
  deadline?: NodeJS.Timeout
}

/** How many OOM kills Docker told of in one container, heard from before it starts. */
interface OomWatch {
  readonly count: () => number
  readonly close: () => void
}

/**
 * Docker's `oom` events of container `id`. Docker marks `State.OOMKilled` only when containerd's
 * OOM event comes before the exit's, which a busy host does not keep to (the mark then never
 * comes); the event itself is published either way. So the stand-in listens for it, as the kubelet
 * has the runtime's own OOM count when it reports an exit.
 */
const watchOom = async (id: string): Promise<OomWatch> => {
  let count = 0
  const stream = (await docker.getEvents({
    filters: JSON.stringify({ type: ["container"], container: [id], event: ["oom"] })
  })) as NodeJS.ReadableStream & { readonly destroy: () => void }
  stream.on("data", () => count++)
  stream.on("error", () => {})
  return { count: () => count, close: () => stream.destroy() }
}

/**
 * A container's state once it exited. A 137 under a memory limit is an OOM kill when Docker marked
 * it, or told of one since the start (`oom` at `before`): both can come a moment after the exit, so
 * such an exit is asked again for up to 10 s before it is called an `Error`.
 */
const exitState = async (container: Dockerode.Container, oom: OomWatch | undefined, before: number) => {
  let info = await container.inspect()
  const limited = (info.HostConfig.Memory ?? 0) > 0
  for (let asked = 0; limited && info.State.ExitCode === 137 && asked < 200; asked++) {
    if (info.State.OOMKilled || (oom !== undefined && oom.count() > before)) return { ...info.State, OOMKilled: true }
    await sleep(50)
    info = await container.inspect()
  }
  return info.State
}

export class Kubelet {
  private readonly store: Store
  private readonly volumes: Volumes
  private readonly instance: string
  private readonly probePeriodMs: number
  private readonly runs = new Map<string, Run>()
  /** Held: the node has no room, as a cluster waits for its autoscaler's new node. */
  readonly capacity = new Gate()
  /** Images whose next pull fails once (a registry's blip), then succeeds. */
  private readonly blips = new Set<string>()
  /** Set by close(): a pod created afterwards (a controller's late reconcile) is stored but never run. */
  private closed = false

  private readonly admission: Admission

  constructor(store: Store, volumes: Volumes, admission: Admission, instance: string, probePeriodMs: number) {
    this.store = store
    this.volumes = volumes
    this.admission = admission
    this.instance = instance
    this.probePeriodMs = probePeriodMs
  }

  /** Store a new pod (defaults filled in, status Pending) once admitted, and start running it. */
  create(namespace: string, body: NewObject): KObject {
    validatePod(body)
    this.admission.pod(namespace, body)
    const pod = this.store.create(Pods, namespace, {
      ...body,
      spec: { restartPolicy: "Always", terminationGracePeriodSeconds: 30, ...body.spec },
      status: { phase: "Pending", qosClass: body.spec?.containers?.[0]?.resources?.limits ? "Burstable" : "BestEffort" }
    })
    if (this.closed) return pod
    const run: Run = { abort: new AbortController(), emptyDirs: [], done: Promise.resolve() }
    this.runs.set(`${namespace}/${pod.metadata.name}`, run)
    run.done = this.run(pod, run).catch((error: Error) => {
      if (run.abort.signal.aborted) return
      recordEvent(this.store, pod, "Warning", "Failed", `Error: ${error.message}`)
      this.setContainer(pod, { state: { waiting: { reason: "CreateContainerError", message: error.message } } })
    })
    return pod
  }

  /** DELETE: the pod is marked Terminating now; its container is killed, then the pod removed. */
  delete(namespace: string, name: string): KObject {
    const marked = this.store.update(Pods, namespace, name, (pod) => ({
      ...pod,
      metadata: { ...pod.metadata, deletionTimestamp: pod.metadata.deletionTimestamp ?? now() }
    }))
    void this.terminate(marked)
    return marked
  }

  private async terminate(pod: KObject) {
    const { namespace, name } = pod.metadata
    const run = this.runs.get(`${namespace}/${name}`)
    this.runs.delete(`${namespace}/${name}`)
    if (run?.container !== undefined && !run.abort.signal.aborted) {
      recordEvent(this.store, pod, "Normal", "Killing", `Stopping container ${pod.spec.containers[0].name}`)
    }
    if (run !== undefined) await this.stop(run)
    this.store.remove(Pods, namespace, name)
    await this.volumes.finalize()
  }

  /**
   * End a pod's loop and remove what it made. The container is removed before
   * waiting for the loop (its `wait()` only returns once the container is gone)
   * and again after (it may have been created while the abort was under way).
   */
  private async stop(run: Run) {
    clearTimeout(run.deadline)
    run.abort.abort()
    await run.container?.remove({ force: true, v: true }).catch(() => {})
    await run.done
    await run.container?.remove({ force: true, v: true }).catch(() => {})
    await Promise.all(run.emptyDirs.map((volume) => docker.getVolume(volume).remove().catch(() => {})))
  }

  /** Stop every pod and remove its container and emptyDir volumes (the pods stay stored). */
  async close() {
    this.closed = true
    const runs = [...this.runs.values()]
    this.runs.clear()
    await Promise.all(runs.map((run) => this.stop(run)))
  }

  /** The container's output (stdout and stderr interleaved), as `pods/{name}/log` serves it. */
  async logs(namespace: string, name: string, tailLines: number | undefined): Promise<string> {
    const pod = this.store.get(Pods, namespace, name)
    const container = this.runs.get(`${namespace}/${name}`)?.container
    if (container === undefined) {
      const waiting = pod.status?.containerStatuses?.[0]?.state?.waiting?.reason ?? "ContainerCreating"
      throw badRequest(`container "${pod.spec.containers[0].name}" in pod "${name}" is waiting to start: ${waiting}`)
    }
    const output = await container.logs({
      stdout: true,
      stderr: true,
      follow: false,
      ...(tailLines === undefined ? {} : { tail: tailLines })
    })
    return demultiplex(output)
  }

  /** activeDeadlineSeconds passed: the kubelet kills the pod and fails it with DeadlineExceeded. */
  private async exceedDeadline(pod: KObject, run: Run) {
    const message = "Pod was active on the node longer than the specified deadline"
    recordEvent(this.store, pod, "Warning", "DeadlineExceeded", message)
    await this.stop(run)
    this.setContainer(
      pod,
      { state: { terminated: { exitCode: 137, reason: "Error" } }, ready: false, started: false },
      {
        phase: "Failed",
        reason: "DeadlineExceeded",
        message
      }
    )
    this.setConditions(pod, readiness(false, pod.spec.containers[0].name, "PodFailed"))
  }

  private setStatus(pod: KObject, change: (status: any) => any) {
    const { namespace, name, uid } = pod.metadata
    const current = this.store.find(Pods, namespace, name)
    if (current === undefined || current.metadata.uid !== uid || current.metadata.deletionTimestamp !== undefined) {
      return
    }
    this.store.update(Pods, namespace, name, (object) => ({ ...object, status: change(object.status) }))
  }

  /** Merge `fields` into the one container status (created on first use). */
  private setContainer(pod: KObject, fields: Record<string, unknown>, rest: Record<string, unknown> = {}) {
    const container = pod.spec.containers[0] as V1Container
    this.setStatus(pod, (status) => {
      const before = status.containerStatuses?.[0] ?? {
        name: container.name,
        image: container.image,
        imageID: "",
        ready: false,
        started: false,
        restartCount: 0,
        lastState: {}
      }
      return { ...status, ...rest, containerStatuses: [{ ...before, ...fields }] }
    })
  }

  private setConditions(pod: KObject, conditions: ReadonlyArray<Condition>, rest: Record<string, unknown> = {}) {
    this.setStatus(pod, (status) => ({ ...status, ...rest, conditions: withConditions(status.conditions, conditions) }))
  }

  /**
   * The next pull of `image` (of any image without one) fails once, as a registry's blip does:
   * the kubelet pulls again after its back-off.
   */
  failNextPull(image = ANY_IMAGE) {
    this.blips.add(image)
  }

  /** Why the scheduler would not place `pod` on the node, if it would not. */
  private unschedulable(pod: KObject): string | undefined {
    const spec = pod.spec as V1PodSpec
    for (const volume of spec.volumes ?? []) {
      const claim = volume.persistentVolumeClaim?.claimName
      if (claim === undefined) continue
      const found = this.store.find(PersistentVolumeClaims, pod.metadata.namespace, claim)
      if (found === undefined) return `0/1 nodes are available: persistentvolumeclaim "${claim}" not found.`
      if (found.metadata.deletionTimestamp !== undefined) {
        return `0/1 nodes are available: persistentvolumeclaim "${claim}" is being deleted.`
      }
      if (found.status?.phase !== "Bound") {
        return "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
      }
    }
    const selector = Object.entries(spec.nodeSelector ?? {})
    if (selector.some(([key, value]) => NODE_LABELS[key] !== value)) {
      return "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."
    }
    if (this.capacity.held) {
      return "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    }
    return undefined
  }

  private async schedule(pod: KObject, signal: AbortSignal) {
    for (let attempt = 0; !signal.aborted; attempt++) {
      const reason = this.unschedulable(pod)
      if (reason === undefined) break
      this.setConditions(pod, [condition("PodScheduled", false, "Unschedulable", reason)])
      recordEvent(this.store, pod, "Warning", "FailedScheduling", reason, "default-scheduler")
      if (this.capacity.held) {
        recordEvent(this.store, pod, "Normal", "TriggeredScaleUp", "pod triggered scale-up", "cluster-autoscaler")
      }
      // Scheduled again at once when the node gets room or a volume binds, as the scheduler's queue does.
      const held = [this.capacity, this.volumes.bound].filter((gate) => gate.held).map((gate) => gate.signal)
      await pause(backoff(attempt), AbortSignal.any([signal, ...held]))
    }
    if (signal.aborted) return
    const { namespace, name } = pod.metadata
    recordEvent(
      this.store,
      pod,
      "Normal",
      "Scheduled",
      `Successfully assigned ${namespace}/${name} to ${NODE_NAME}`,
      "default-scheduler"
    )
    // The binding: spec.nodeName is set (and the fieldRef `spec.nodeName` resolves) once scheduled.
    pod.spec.nodeName = NODE_NAME
    this.store.update(
      Pods,
      namespace,
      name,
      (current) => ({ ...current, spec: { ...current.spec, nodeName: NODE_NAME } })
    )
    this.setConditions(pod, readiness(false, pod.spec.containers[0].name), { hostIP: "127.0.0.1", startTime: now() })
    this.setContainer(pod, { state: { waiting: { reason: "ContainerCreating" } } })
  }

  /** Wait until the image is on the engine, reporting ErrImagePull/ImagePullBackOff meanwhile. */
  private async image(pod: KObject, image: string, signal: AbortSignal) {
    for (let attempt = 0; !signal.aborted; attempt++) {
      const blip = this.blips.delete(image) || this.blips.delete(ANY_IMAGE)
      const found = blip ? undefined : await docker.getImage(image).inspect().catch(() => undefined)
      if (found !== undefined) {
        recordEvent(this.store, pod, "Normal", "Pulled", `Container image "${image}" already present on machine`)
        return found.Id
      }
      const message = blip
        ? `rpc error: code = Unavailable desc = failed to pull and unpack image "${image}": failed to resolve reference "${image}": unexpected status from HEAD request: 503 Service Unavailable`
        : `rpc error: code = NotFound desc = failed to pull and unpack image "${image}": not found (the stand-in never pulls: the image must be on the local Docker engine)`
      if (attempt === 0) recordEvent(this.store, pod, "Normal", "Pulling", `Pulling image "${image}"`)
      recordEvent(this.store, pod, "Warning", "Failed", `Failed to pull image "${image}": ${message}`)
      recordEvent(this.store, pod, "Warning", "Failed", "Error: ErrImagePull")
      this.setContainer(pod, { state: { waiting: { reason: "ErrImagePull", message } } })
      await pause(1000, signal)
      if (signal.aborted) break
      recordEvent(this.store, pod, "Normal", "BackOff", `Back-off pulling image "${image}"`)
      recordEvent(this.store, pod, "Warning", "Failed", "Error: ImagePullBackOff")
      this.setContainer(pod, {
        state: {
          waiting: {
            reason: "ImagePullBackOff",
            message: `Back-off pulling image "${image}": ErrImagePull: ${message}`
          }
        }
      })
      await pause(backoff(attempt), signal)
    }
    return undefined
  }

  /** Docker binds for the container's volume mounts (emptyDir volumes are made here, labelled). */
  private async binds(pod: KObject, run: Run) {
    const spec = pod.spec as V1PodSpec
    const { namespace, name } = pod.metadata
    const sourceOf = async (volume: V1Volume) => {
      if (volume.persistentVolumeClaim !== undefined) {
        return this.volumes.volumeOf(namespace, volume.persistentVolumeClaim.claimName)
      }
      const emptyDir = dockerName(this.instance, namespace, name, "emptydir", volume.name)
      await docker.createVolume({ Name: emptyDir, Labels: labelsOf(this.instance) })
      run.emptyDirs.push(emptyDir)
      return emptyDir
    }
    const binds: Array<string> = []
    for (const mount of spec.containers[0]!.volumeMounts ?? []) {
      const source = await sourceOf(spec.volumes!.find((volume) => volume.name === mount.name)!)
      binds.push(`${source}:${mount.mountPath}${mount.readOnly === true ? ":ro" : ""}`)
    }
    return binds
  }

  private async createContainer(pod: KObject, run: Run, imageId: string) {
    const spec = pod.spec as V1PodSpec
    const container = spec.containers[0]!
    const { namespace, name } = pod.metadata
    const memory = quantity(container.resources?.limits?.["memory"])
    const cpu = quantity(container.resources?.limits?.["cpu"])
    const security = securityOptions(spec, container)
    const env = resolveEnv(this.store, pod)
    run.container = await docker.createContainer({
      name: dockerName(this.instance, namespace, name),
      Hostname: name.slice(0, 63),
      Image: imageId,
      ...(container.command === undefined ? {} : { Entrypoint: container.command }),
      ...(container.args === undefined ? {} : { Cmd: container.args }),
      ...(container.workingDir === undefined ? {} : { WorkingDir: container.workingDir }),
      ...(security.User === undefined ? {} : { User: security.User }),
      Env: env,
      Labels: labelsOf(this.instance, { "effect-sandbox.k8s-standin.pod": `${namespace}/${name}` }),
      HostConfig: {
        NetworkMode: "bridge",
        Binds: await this.binds(pod, run),
        ...(memory === undefined ? {} : { Memory: memory, MemorySwap: memory }),
        ...(cpu === undefined ? {} : { NanoCpus: Math.round(cpu * 1e9) }),
        ...security.HostConfig
      }
    })
    recordEvent(this.store, pod, "Normal", "Created", `Created container: ${container.name}`)
  }

  /** Create the container, retrying while its configuration cannot be resolved (CreateContainerConfigError). */
  private async created(pod: KObject, run: Run, imageId: string, signal: AbortSignal) {
    for (let attempt = 0; !signal.aborted; attempt++) {
      try {
        await this.createContainer(pod, run, imageId)
        return true
      } catch (error) {
        if (!(error instanceof ContainerConfigError)) throw error
        recordEvent(this.store, pod, "Warning", "Failed", `Error: ${error.message}`)
        this.setContainer(pod, { state: { waiting: { reason: "CreateContainerConfigError", message: error.message } } })
        await pause(backoff(attempt), signal)
      }
    }
    return false
  }

  /** Probe readiness until `signal` (the container exited or the pod is deleted). */
  private async probe(pod: KObject, ip: string, signal: AbortSignal) {
    const container = pod.spec.containers[0] as V1Container
    const probe = container.readinessProbe
    const setReady = (ready: boolean) => {
      this.setContainer(pod, { ready })
      this.setConditions(pod, readiness(ready, container.name))
    }
    if (probe === undefined) return setReady(true)
    await pause((probe.initialDelaySeconds ?? 0) * 1000, signal)
    const period = Math.min((probe.periodSeconds ?? 10) * 1000, this.probePeriodMs)
    let ready = false
    let failures = 0
    while (!signal.aborted) {
      const failure = await probeOnce(container, probe, ip)
      if (signal.aborted) return
      if (failure === undefined) {
        failures = 0
        if (!ready) setReady(ready = true)
      } else {
        recordEvent(this.store, pod, "Warning", "Unhealthy", `Readiness probe failed: ${failure}`)
        if (ready && ++failures >= (probe.failureThreshold ?? 3)) setReady(ready = false)
      }
      await pause(period, signal)
    }
  }

  private async run(pod: KObject, run: Run) {
    const { signal } = run.abort
    const container = pod.spec.containers[0] as V1Container
    await this.schedule(pod, signal)
    const deadline = (pod.spec as V1PodSpec).activeDeadlineSeconds
    if (deadline !== undefined && !signal.aborted) {
      run.deadline = setTimeout(() => void this.exceedDeadline(pod, run).catch(() => {}), deadline * 1000)
    }
    const imageId = signal.aborted ? undefined : await this.image(pod, container.image!, signal)
    if (imageId === undefined) return
    if (!(await this.created(pod, run, imageId, signal))) return
    const containerID = `docker://${run.container!.id}`
    const oom = container.resources?.limits?.["memory"] === undefined ? undefined : await watchOom(run.container!.id)
    try {
      await this.runContainer(pod, run, container, imageId, containerID, oom)
    } finally {
      oom?.close()
    }
  }

  /** Start the pod's container, and again after each exit as its restart policy says, until aborted. */
  private async runContainer(
    pod: KObject,
    run: Run,
    container: V1Container,
    imageId: string,
    containerID: string,
    oom: OomWatch | undefined
  ) {
    const { signal } = run.abort
    const restartPolicy = (pod.spec as V1PodSpec).restartPolicy
    for (let restarts = 0; !signal.aborted; restarts++) {
      const oomsBefore = oom?.count() ?? 0
      await run.container!.start()
      if (signal.aborted) return
      const started = await run.container!.inspect()
      const ip = started.NetworkSettings.Networks["bridge"]!.IPAddress
      recordEvent(this.store, pod, "Normal", "Started", `Started container ${container.name}`)
      this.setContainer(pod, {
        state: { running: { startedAt: started.State.StartedAt.replace(/\.\d+Z$/, "Z") } },
        ready: false,
        started: true,
        restartCount: restarts,
        imageID: `docker-pullable://${imageId}`,
        containerID
      }, { phase: "Running", podIP: ip, podIPs: [{ ip }] })
      const exited = new AbortController()
      const probing = this.probe(pod, ip, AbortSignal.any([signal, exited.signal]))
      await run.container!.wait().catch(() => {})
      exited.abort()
      await probing
      if (signal.aborted) return
      const State = await exitState(run.container!, oom, oomsBefore)
      const terminated = {
        exitCode: State.OOMKilled ? 137 : State.ExitCode,
        reason: State.OOMKilled ? "OOMKilled" : State.ExitCode === 0 ? "Completed" : "Error",
        startedAt: State.StartedAt.replace(/\.\d+Z$/, "Z"),
        finishedAt: State.FinishedAt.replace(/\.\d+Z$/, "Z"),
        containerID
      }
      if (restartPolicy === "Never" || (restartPolicy === "OnFailure" && terminated.exitCode === 0)) {
        const phase = terminated.exitCode === 0 ? "Succeeded" : "Failed"
        this.setContainer(pod, { state: { terminated }, ready: false, started: false }, { phase })
        this.setConditions(pod, readiness(false, container.name, phase === "Succeeded" ? "PodCompleted" : "PodFailed"))
        return
      }
      const delay = backoff(restarts)
      const { namespace, name, uid } = pod.metadata
      this.setContainer(pod, {
        state: {
          waiting: {
            reason: "CrashLoopBackOff",
            message: `back-off ${
              delay / 1000
            }s restarting failed container=${container.name} pod=${name}_${namespace}(${uid})`
          }
        },
        lastState: { terminated },
        ready: false,
        started: false,
        restartCount: restarts + 1
      })
      this.setConditions(pod, readiness(false, container.name))
      recordEvent(
        this.store,
        pod,
        "Warning",
        "BackOff",
        `Back-off restarting failed container ${container.name} in pod ${name}_${namespace}(${uid})`
      )
      await pause(delay, signal)
    }
  }
}
