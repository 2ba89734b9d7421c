/**
 * The stand-in API server, driven only through @kubernetes/client-node (from
 * the kubeconfig file it writes): discovery with and without the agent-sandbox
 * CRDs, a pod on a PVC becoming Ready from its readiness probe and served through
 * a port-forward, image pull and crash failures as a kubelet reports them, the
 * Sandbox controller's replicas 1/0, and nothing left on the engine afterwards.
 */
import { assert, it } from "@effect/vitest"
import {
  ApiException,
  ApisApi,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  NetworkingV1Api,
  PatchStrategy,
  PortForward,
  setHeaderOptions,
  type V1Pod,
  Watch
} from "@kubernetes/client-node"
import { createServer, type Server } from "node:net"
import { PassThrough } from "node:stream"
import { afterAll, beforeAll } from "vitest"
import type { WebSocket } from "ws"
import { describeDocker, toolsImage } from "../docker/infra.ts"
import { leftovers } from "./standin/docker.ts"
import { type StandIn, startStandIn } from "./standin/server.ts"

const namespace = "default"

/** client-node's clients for a stand-in, from its kubeconfig file. */
const clients = (standIn: StandIn) => {
  const kc = new KubeConfig()
  kc.loadFromFile(standIn.kubeconfigPath)
  return { kc, core: kc.makeApiClient(CoreV1Api), custom: kc.makeApiClient(CustomObjectsApi) }
}

/** Watch `plural` of the namespace until `done(type, object)` holds for a change of object `name`. */
const watchUntil = <T extends { metadata?: { name?: string } }>(
  kc: KubeConfig,
  path: string,
  name: string,
  done: (type: string, object: T) => boolean,
  ms = 30_000
) =>
  new Promise<T>((resolve, reject) => {
    let controller: AbortController | undefined
    const timer = setTimeout(() => {
      controller?.abort()
      reject(new Error(`no matching change of ${name} on ${path} within ${ms} ms`))
    }, ms)
    void new Watch(kc).watch(path, { fieldSelector: `metadata.name=${name}` }, (type, object: T) => {
      if (!done(type, object)) return
      clearTimeout(timer)
      controller?.abort()
      resolve(object)
    }, (error) => error && !controller?.signal.aborted && reject(error)).then((c) => (controller = c))
  })

const podsPath = `/api/v1/namespaces/${namespace}/pods`
const isReady = (pod: V1Pod) => pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true
const waitingReason = (pod: V1Pod) => pod.status?.containerStatuses?.[0]?.state?.waiting?.reason

/** A local TCP port whose connections client-node's PortForward carries to `port` of the pod. */
const forwardPort = async (kc: KubeConfig, pod: string, port: number) => {
  const forward = new PortForward(kc)
  const server: Server = createServer((socket) =>
    void forward.portForward(namespace, pod, [port], socket, null, socket)
  )
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { port: (server.address() as { port: number }).port, close: () => server.close() }
}

/** Poll `check` every 100 ms for at most `ms`; whether it held. */
const until = async (check: () => Promise<boolean>, ms: number) => {
  for (const started = Date.now(); Date.now() - started < ms;) {
    if (await check()) return true
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return false
}

const sandboxes = { group: "agents.x-k8s.io", version: "v1alpha1", namespace, plural: "sandboxes" }
const sandboxesPath = `/apis/agents.x-k8s.io/v1alpha1/namespaces/${namespace}/sandboxes`

/** The Sandbox `name` once its Ready condition has `reason`. */
const sandboxReaching = (kc: KubeConfig, name: string, reason: string) =>
  watchUntil<any>(kc, sandboxesPath, name, (_, sandbox) => sandbox.status?.conditions?.[0]?.reason === reason)

/** Create a Sandbox custom resource named `name` with `spec`. */
const createSandbox = (custom: CustomObjectsApi, name: string, spec: unknown) =>
  custom.createNamespacedCustomObject({
    ...sandboxes,
    body: { apiVersion: "agents.x-k8s.io/v1alpha1", kind: "Sandbox", metadata: { name }, spec }
  })

/** The code, reason and message of the Status a failed client-node call carried. */
const statusOf = (call: Promise<unknown>) =>
  call.then(() => undefined, (e: ApiException<string>) => {
    const { code, reason, message } = JSON.parse(e.body)
    return { code, reason, message }
  })

const containerIdOf = (pod: V1Pod) => pod.status!.containerStatuses![0]!.containerID!.replace("docker://", "")

describeDocker("Kubernetes stand-in API server", () => {
  let standIn: StandIn
  let image: string
  beforeAll(async () => {
    image = toolsImage()
    standIn = await startStandIn()
  }, 120_000)
  afterAll(() => standIn?.close())

  it("answers discovery with the agent-sandbox CRDs, and without them when started so", async () => {
    const { kc, custom } = clients(standIn)
    const groups = await kc.makeApiClient(ApisApi).getAPIVersions()
    assert.deepStrictEqual(groups.groups.map((g) => g.name).sort(), [
      "agents.x-k8s.io",
      "coordination.k8s.io",
      "extensions.agents.x-k8s.io",
      "networking.k8s.io"
    ])
    const resources = await custom.getAPIResources({ group: "agents.x-k8s.io", version: "v1alpha1" })
    assert.deepStrictEqual(resources.resources.map((r) => [r.name, r.kind]), [["sandboxes", "Sandbox"]])

    // Also over TLS: client-node verifies the stand-in's certificate from certificate-authority-data.
    const bare = await startStandIn({ agentSandbox: false, tls: true })
    try {
      assert.match(bare.url, /^https:\/\/127\.0\.0\.1:\d+$/)
      const without = clients(bare)
      assert.deepStrictEqual((await without.kc.makeApiClient(ApisApi).getAPIVersions()).groups.map((g) => g.name), [
        "networking.k8s.io",
        "coordination.k8s.io"
      ])
      const missing = await without.custom.getAPIResources({ group: "agents.x-k8s.io", version: "v1alpha1" }).then(
        () => undefined,
        (error: ApiException<string>) => error
      )
      assert.strictEqual(missing?.code, 404)
      const refused = await new PortForward(without.kc).portForward(
        namespace,
        "absent",
        [80],
        new PassThrough(),
        null,
        new PassThrough()
      )
        .then(() => undefined, (error: { message: string }) => error.message)
      assert.strictEqual(refused, "Unexpected server response: 404")
    } finally {
      await bare.close()
    }
  })

  it("refuses a wrong token with 401 and a missing pod with a NotFound Status", async () => {
    const { core } = clients(standIn)
    const notFound = await core.readNamespacedPod({ name: "nope", namespace }).then(
      () => undefined,
      (e: ApiException<string>) => e
    )
    assert.strictEqual(notFound?.code, 404)
    assert.deepInclude(JSON.parse(notFound!.body), {
      kind: "Status",
      status: "Failure",
      reason: "NotFound",
      message: `pods "nope" not found`,
      code: 404
    })
    const kc = new KubeConfig()
    kc.loadFromFile(standIn.kubeconfigPath)
    kc.users[0] = { ...kc.users[0]!, token: "wrong" }
    const refused = await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace }).then(
      () => undefined,
      (e: ApiException<string>) => e
    )
    assert.strictEqual(refused?.code, 401)
  })

  it("refuses what it cannot run or parse with 422/400 Status objects, and creates nothing", async () => {
    const { core } = clients(standIn)
    assert.deepStrictEqual(
      await statusOf(core.createNamespacedPod({
        namespace,
        body: { metadata: { name: "two" }, spec: { containers: [{ name: "a", image }, { name: "b", image }] } }
      })),
      {
        code: 422,
        reason: "Invalid",
        message: `Pod "two" is invalid: spec.containers: Too many: the stand-in runs pods of exactly one container`
      }
    )
    assert.deepStrictEqual(
      await statusOf(core.createNamespacedPod({
        namespace,
        body: { metadata: { name: "Bad_Name" }, spec: { containers: [{ name: "a", image }] } }
      })).then((status) => [status?.code, status?.reason]),
      [422, "Invalid"]
    )
    assert.deepStrictEqual(await statusOf(core.listNamespacedPod({ namespace, labelSelector: "a in (b" })), {
      code: 400,
      reason: "BadRequest",
      message: `unable to parse requirement: invalid selector term "a in (b"`
    })
    assert.deepStrictEqual((await core.listNamespacedPod({ namespace })).items, [])
    assert.deepStrictEqual((await leftovers(standIn.instance)).containers, [])
  })

  it("runs a pod on a PVC until its readiness probe passes, forwards a port to it, and deletion kills the container", async () => {
    const { kc, core } = clients(standIn)
    await core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: "web-data" },
        spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } }
      }
    })
    const claim = await core.readNamespacedPersistentVolumeClaim({ name: "web-data", namespace })
    assert.strictEqual(claim.status?.phase, "Bound")
    const ready = watchUntil<V1Pod>(kc, podsPath, "web", (_, pod) => isReady(pod))
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: "web", labels: { app: "web" } },
        spec: {
          containers: [{
            name: "web",
            image,
            command: [
              "sh",
              "-c",
              "echo served-from-pvc > /data/index.html && exec python3 -m http.server 8000 -d /data"
            ],
            volumeMounts: [{ name: "data", mountPath: "/data" }],
            readinessProbe: { httpGet: { path: "/index.html", port: 8000 }, periodSeconds: 1 }
          }],
          volumes: [{ name: "data", persistentVolumeClaim: { claimName: "web-data" } }]
        }
      }
    })
    const pod = await ready
    assert.strictEqual(pod.status?.phase, "Running")
    assert.deepStrictEqual(pod.status?.conditions?.map((c) => [c.type, c.status]), [
      ["PodScheduled", "True"],
      ["Initialized", "True"],
      ["ContainersReady", "True"],
      ["Ready", "True"]
    ])
    const id = containerIdOf(pod)
    const { containers } = await leftovers(standIn.instance)
    assert.include(containers, id)
    const listed = await core.listNamespacedPod({ namespace, labelSelector: "app=web" })
    assert.deepStrictEqual(listed.items.map((p) => p.status?.podIP), [pod.status?.podIP])
    assert.match(pod.status!.podIP!, /^\d+\.\d+\.\d+\.\d+$/)

    const forwarded = await forwardPort(kc, "web", 8000)
    try {
      const page = await fetch(`http://127.0.0.1:${forwarded.port}/index.html`)
      assert.strictEqual(page.status, 200)
      assert.strictEqual(await page.text(), "served-from-pvc\n")
    } finally {
      forwarded.close()
    }
    // A dropped port-forward closes the client's WebSocket; a new one works again.
    const input = new PassThrough()
    const output = new PassThrough()
    const ws = await new PortForward(kc).portForward(namespace, "web", [8000], output, null, input) as WebSocket
    const closed = new Promise((resolve) => ws.once("close", resolve))
    assert.isAtLeast(standIn.dropPortForwards(), 1)
    await closed
    const again = await forwardPort(kc, "web", 8000)
    try {
      assert.strictEqual(await (await fetch(`http://127.0.0.1:${again.port}/index.html`)).text(), "served-from-pvc\n")
    } finally {
      again.close()
    }

    const deleted = watchUntil<V1Pod>(kc, podsPath, "web", (type) => type === "DELETED")
    const marked = await core.deleteNamespacedPod({ name: "web", namespace })
    assert.isDefined(marked.metadata?.deletionTimestamp)
    await deleted
    assert.notInclude((await leftovers(standIn.instance)).containers, id)
    await core.deleteNamespacedPersistentVolumeClaim({ name: "web-data", namespace })
    assert.deepStrictEqual((await core.listNamespacedPersistentVolumeClaim({ namespace })).items, [])
    assert.deepStrictEqual((await leftovers(standIn.instance)).volumes, [])
  })

  it("reports an image that is not on the engine as ErrImagePull with a Failed event", async () => {
    const { kc, core } = clients(standIn)
    const missing = "effect-sandbox/no-such-image:1"
    const failing = watchUntil<V1Pod>(kc, podsPath, "no-image", (_, pod) => waitingReason(pod) === "ErrImagePull")
    await core.createNamespacedPod({
      namespace,
      body: { metadata: { name: "no-image" }, spec: { containers: [{ name: "main", image: missing }] } }
    })
    const pod = await failing
    assert.strictEqual(pod.status?.phase, "Pending")
    assert.match(
      pod.status!.containerStatuses![0]!.state!.waiting!.message!,
      /failed to pull and unpack image "effect-sandbox\/no-such-image:1"/
    )
    const events = await core.listNamespacedEvent({ namespace, fieldSelector: "involvedObject.name=no-image" })
    const failed = events.items.filter((e) => e.reason === "Failed").map((e) => e.message)
    assert.include(failed, "Error: ErrImagePull")
    assert.isTrue(failed.some((m) => m?.startsWith(`Failed to pull image "${missing}": rpc error: code = NotFound`)))
    assert.isTrue(
      events.items.every((e) => e.involvedObject.kind === "Pod" && e.involvedObject.uid === pod.metadata?.uid)
    )
    const backoff = await watchUntil<V1Pod>(kc, podsPath, "no-image", (_, p) => waitingReason(p) === "ImagePullBackOff")
    assert.strictEqual(backoff.status?.phase, "Pending")
    const refused = await new PortForward(kc).portForward(
      namespace,
      "no-image",
      [80],
      new PassThrough(),
      null,
      new PassThrough()
    )
      .then(() => undefined, (error: { message: string }) => error.message)
    assert.strictEqual(refused, "Unexpected server response: 400")
    await core.deleteNamespacedPod({ name: "no-image", namespace })
  })

  it("reports a crashing container as CrashLoopBackOff and an OOM kill as OOMKilled 137", async () => {
    const { kc, core } = clients(standIn)
    const crashing = watchUntil<V1Pod>(kc, podsPath, "crash", (_, pod) => waitingReason(pod) === "CrashLoopBackOff")
    const oom = watchUntil<V1Pod>(kc, podsPath, "oom", (_, pod) => pod.status?.phase === "Failed")
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: "crash" },
        spec: { containers: [{ name: "main", image, command: ["sh", "-c", "echo about to fail >&2; exit 3"] }] }
      }
    })
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: "oom" },
        spec: {
          restartPolicy: "Never",
          containers: [{
            name: "main",
            image,
            command: ["python3", "-c", "blocks = [bytearray(16 << 20) for _ in range(64)]"],
            resources: { limits: { memory: "64Mi" } }
          }]
        }
      }
    })
    const crashed = (await crashing).status!.containerStatuses![0]!
    assert.strictEqual(await core.readNamespacedPodLog({ name: "crash", namespace }), "about to fail\n")
    assert.strictEqual(crashed.lastState?.terminated?.exitCode, 3)
    assert.strictEqual(crashed.lastState?.terminated?.reason, "Error")
    assert.strictEqual(crashed.restartCount, 1)
    const killed = (await oom).status!.containerStatuses![0]!.state!.terminated!
    assert.deepInclude(killed, { reason: "OOMKilled", exitCode: 137 })
    await core.deleteNamespacedPod({ name: "crash", namespace })
    await core.deleteNamespacedPod({ name: "oom", namespace })
  })

  it("runs a Sandbox's pod, deletes it at replicas 0 and recreates it at 1, and deleting the Sandbox deletes the pod", async () => {
    const { kc, custom } = clients(standIn)
    const running = watchUntil<V1Pod>(kc, podsPath, "agent", (_, pod) => isReady(pod))
    await createSandbox(custom, "agent", {
      podTemplate: {
        metadata: { labels: { role: "agent" } },
        spec: { containers: [{ name: "agent", image, command: ["sleep", "300"] }] }
      }
    })
    const pod = await running
    assert.strictEqual(pod.metadata?.labels?.["role"], "agent")
    assert.deepInclude(pod.metadata?.ownerReferences?.[0] ?? {}, { kind: "Sandbox", name: "agent" })
    const readySandbox = await sandboxReaching(kc, "agent", "DependenciesReady")
    assert.strictEqual(readySandbox.status.replicas, 1)
    assert.deepStrictEqual(readySandbox.status.podIPs, [pod.status?.podIP])

    const scale = (replicas: number) =>
      custom.patchNamespacedCustomObject(
        { ...sandboxes, name: "agent", body: { spec: { replicas } } },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch)
      )
    const gone = watchUntil<V1Pod>(kc, podsPath, "agent", (type) => type === "DELETED")
    await scale(0)
    await gone
    assert.notInclude((await leftovers(standIn.instance)).containers, containerIdOf(pod))
    const paused = await custom.getNamespacedCustomObject({ ...sandboxes, name: "agent" })
    assert.strictEqual(paused.status.replicas, 0)
    assert.strictEqual(paused.status.conditions[0].reason, "SandboxSuspended")

    const back = watchUntil<V1Pod>(kc, podsPath, "agent", (_, p) => isReady(p))
    await scale(1)
    const resumed = await back
    assert.notStrictEqual(resumed.metadata?.uid, pod.metadata?.uid)

    const removed = watchUntil<V1Pod>(kc, podsPath, "agent", (type) => type === "DELETED")
    const status = await custom.deleteNamespacedCustomObject({ ...sandboxes, name: "agent" })
    assert.strictEqual(status.status, "Success")
    await removed
  })

  it("expires a Sandbox at its shutdownTime: the pod goes, the Sandbox stays with SandboxExpired (Retain)", async () => {
    const { kc, custom } = clients(standIn)
    const ran = watchUntil<V1Pod>(kc, podsPath, "short", (_, pod) => pod.status?.phase === "Running")
    const gone = watchUntil<V1Pod>(kc, podsPath, "short", (type) => type === "DELETED")
    await createSandbox(custom, "short", {
      shutdownTime: new Date(Date.now() + 2_000).toISOString(),
      podTemplate: { spec: { containers: [{ name: "agent", image, command: ["sleep", "300"] }] } }
    })
    await ran
    await gone
    const expired = await sandboxReaching(kc, "short", "SandboxExpired")
    assert.strictEqual(expired.status.replicas, 0)
    await custom.deleteNamespacedCustomObject({ ...sandboxes, name: "short" })
  })

  it("keeps a SandboxWarmPool filled and hands its ready Sandbox to a SandboxClaim, or makes one from the template", async () => {
    const { kc, core, custom } = clients(standIn)
    const extensions = { group: "extensions.agents.x-k8s.io", version: "v1alpha1", namespace }
    const create = (plural: string, kind: string, name: string, spec: unknown) =>
      custom.createNamespacedCustomObject({
        ...extensions,
        plural,
        body: { apiVersion: "extensions.agents.x-k8s.io/v1alpha1", kind, metadata: { name }, spec }
      })
    const extensionsPath = (plural: string) =>
      `/apis/extensions.agents.x-k8s.io/v1alpha1/namespaces/${namespace}/${plural}`
    await create("sandboxtemplates", "SandboxTemplate", "tpl", {
      podTemplate: { spec: { containers: [{ name: "agent", image, command: ["sleep", "300"] }] } },
      // Claims may add env only where the template says so (default Disallowed).
      envVarsInjectionPolicy: "Allowed"
    })
    const filled = watchUntil<any>(
      kc,
      extensionsPath("sandboxwarmpools"),
      "pool",
      (_, p) => p.status?.readyReplicas === 1
    )
    await create("sandboxwarmpools", "SandboxWarmPool", "pool", { replicas: 1, sandboxTemplateRef: { name: "tpl" } })
    await filled

    const claimCondition = (name: string, holds: (condition: { status: string; reason: string }) => boolean) =>
      watchUntil<any>(
        kc,
        extensionsPath("sandboxclaims"),
        name,
        (_, c) => c.status?.conditions?.[0] !== undefined && holds(c.status.conditions[0])
      )
    const claimed = claimCondition("warm", (c) => c.status === "True")
    await create("sandboxclaims", "SandboxClaim", "warm", { sandboxTemplateRef: { name: "tpl" } })
    const warm = (await claimed).status.sandbox.name as string
    assert.match(warm, /^pool-[0-9a-f]{5}$/)
    const adopted = await custom.getNamespacedCustomObject({ ...sandboxes, name: warm })
    assert.deepInclude(adopted.metadata.ownerReferences[0], { kind: "SandboxClaim", name: "warm" })
    const poolMembers = () =>
      custom.listNamespacedCustomObject({ ...sandboxes, labelSelector: "agents.x-k8s.io/pool=pool" }).then((list) =>
        list.items.filter((s: any) => s.metadata.name !== warm && s.status?.conditions?.[0]?.status === "True")
      )
    assert.isTrue(
      await until(async () => (await poolMembers()).length === 1, 20_000),
      "the pool made no new ready sandbox"
    )

    const fresh = watchUntil<V1Pod>(kc, podsPath, "cold", (_, pod) => isReady(pod))
    await create("sandboxclaims", "SandboxClaim", "cold", {
      sandboxTemplateRef: { name: "tpl" },
      warmpool: "none",
      env: [{ name: "GREETING", value: "hello" }]
    })
    assert.deepStrictEqual((await fresh).spec?.containers[0]?.env, [{ name: "GREETING", value: "hello" }])

    const missing = claimCondition("orphan", (c) => c.reason === "TemplateNotFound")
    await create("sandboxclaims", "SandboxClaim", "orphan", { sandboxTemplateRef: { name: "absent" } })
    assert.strictEqual((await missing).status.conditions[0].message, `SandboxTemplate "absent" not found`)

    const warmGone = watchUntil<V1Pod>(kc, podsPath, warm, (type) => type === "DELETED")
    for (
      const [plural, name] of [["sandboxclaims", "warm"], ["sandboxclaims", "cold"], ["sandboxclaims", "orphan"], [
        "sandboxwarmpools",
        "pool"
      ], ["sandboxtemplates", "tpl"]]
    ) {
      await custom.deleteNamespacedCustomObject({ ...extensions, plural: plural!, name: name! })
    }
    await warmGone
    await until(async () => (await core.listNamespacedPod({ namespace })).items.length === 0, 20_000)
    assert.deepStrictEqual((await core.listNamespacedPod({ namespace })).items.map((p) => p.metadata?.name), [])
  })

  it("resolves env from Secrets and the pod's fields, applies the security context, and waits for a missing Secret", async () => {
    const { kc, core } = clients(standIn)
    await core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: "api" }, stringData: { token: "s3cret" } }
    })
    assert.deepStrictEqual((await core.readNamespacedSecret({ name: "api", namespace })).data, {
      token: Buffer.from("s3cret").toString("base64")
    })
    const done = watchUntil<V1Pod>(kc, podsPath, "env", (_, pod) => pod.status?.phase === "Succeeded")
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: "env" },
        spec: {
          restartPolicy: "Never",
          containers: [{
            name: "main",
            image,
            command: ["sh", "-c", "echo \"$TOKEN $POD $NODE $(id -u):$(id -g)\"; grep NoNewPrivs /proc/self/status"],
            env: [
              { name: "TOKEN", valueFrom: { secretKeyRef: { name: "api", key: "token" } } },
              { name: "POD", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
              { name: "NODE", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } }
            ],
            securityContext: {
              runAsUser: 1000,
              runAsGroup: 1000,
              allowPrivilegeEscalation: false,
              capabilities: { drop: ["ALL"] }
            }
          }]
        }
      }
    })
    await done
    assert.strictEqual(
      await core.readNamespacedPodLog({ name: "env", namespace }),
      "s3cret env standin-node 1000:1000\nNoNewPrivs:\t1\n"
    )

    const blocked = watchUntil<V1Pod>(
      kc,
      podsPath,
      "later",
      (_, pod) => waitingReason(pod) === "CreateContainerConfigError"
    )
    const ran = watchUntil<V1Pod>(kc, podsPath, "later", (_, pod) => pod.status?.phase === "Succeeded")
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: "later" },
        spec: {
          restartPolicy: "Never",
          containers: [{
            name: "main",
            image,
            command: ["true"],
            env: [{ name: "KEY", valueFrom: { secretKeyRef: { name: "late", key: "k" } } }]
          }]
        }
      }
    })
    const waiting = await blocked
    assert.strictEqual(waiting.status?.containerStatuses?.[0]?.state?.waiting?.message, `secret "late" not found`)
    await core.createNamespacedSecret({ namespace, body: { metadata: { name: "late" }, stringData: { k: "v" } } })
    await ran
    for (const name of ["env", "later"]) await core.deleteNamespacedPod({ name, namespace })
    for (const name of ["api", "late"]) await core.deleteNamespacedSecret({ name, namespace })
  })

  it("reports a pod whose claim does not exist as Unschedulable with a FailedScheduling event", async () => {
    const { kc, core } = clients(standIn)
    const pending = watchUntil<V1Pod>(
      kc,
      podsPath,
      "no-claim",
      (_, pod) =>
        pod.status?.conditions?.some((c) => c.type === "PodScheduled" && c.reason === "Unschedulable") === true
    )
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: "no-claim" },
        spec: {
          containers: [{ name: "main", image, volumeMounts: [{ name: "w", mountPath: "/w" }] }],
          volumes: [{ name: "w", persistentVolumeClaim: { claimName: "absent" } }]
        }
      }
    })
    const pod = await pending
    const message = `0/1 nodes are available: persistentvolumeclaim "absent" not found.`
    assert.strictEqual(pod.status?.conditions?.[0]?.message, message)
    const events = await core.listNamespacedEvent({ namespace, fieldSelector: "involvedObject.name=no-claim" })
    assert.deepStrictEqual(events.items.map((e) => [e.type, e.reason, e.message, e.source?.component]), [
      ["Warning", "FailedScheduling", message, "default-scheduler"]
    ])
    await core.deleteNamespacedPod({ name: "no-claim", namespace })
  })

  it("fails a pod past its activeDeadlineSeconds with DeadlineExceeded and removes its container", async () => {
    const { kc, core } = clients(standIn)
    const running = watchUntil<V1Pod>(kc, podsPath, "deadline", (_, pod) => pod.status?.phase === "Running")
    const failed = watchUntil<V1Pod>(kc, podsPath, "deadline", (_, pod) => pod.status?.phase === "Failed")
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: "deadline" },
        spec: { activeDeadlineSeconds: 3, containers: [{ name: "main", image, command: ["sleep", "300"] }] }
      }
    })
    const id = containerIdOf(await running)
    const pod = await failed
    assert.strictEqual(pod.status?.reason, "DeadlineExceeded")
    assert.strictEqual(pod.status?.message, "Pod was active on the node longer than the specified deadline")
    assert.notInclude((await leftovers(standIn.instance)).containers, id)
    await core.deleteNamespacedPod({ name: "deadline", namespace })
  })

  it("applies JSON and merge patches, and refuses a stale resourceVersion with 409 Conflict", async () => {
    const { kc } = clients(standIn)
    const leases = kc.makeApiClient(CoordinationV1Api)
    const lease = await leases.createNamespacedLease({
      namespace,
      body: { metadata: { name: "owner" }, spec: { holderIdentity: "a", leaseDurationSeconds: 15 } }
    })
    const patched = await leases.patchNamespacedLease({
      name: "owner",
      namespace,
      body: [{ op: "add", path: "/metadata/annotations", value: { "effect-sandbox/heartbeat": "1" } }]
    })
    assert.deepStrictEqual(patched.metadata?.annotations, { "effect-sandbox/heartbeat": "1" })
    assert.notStrictEqual(patched.metadata?.resourceVersion, lease.metadata?.resourceVersion)
    const merged = await leases.patchNamespacedLease(
      { name: "owner", namespace, body: { spec: { holderIdentity: "b" } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch)
    )
    assert.deepStrictEqual(merged.spec, { holderIdentity: "b", leaseDurationSeconds: 15 })
    const stale = await leases.replaceNamespacedLease({ name: "owner", namespace, body: lease }).then(
      () => undefined,
      (e: ApiException<string>) => e
    )
    assert.strictEqual(stale?.code, 409)
    assert.strictEqual(JSON.parse(stale!.body).reason, "Conflict")
    await leases.deleteNamespacedLease({ name: "owner", namespace })
  })

  it("resumes a watch from a list's resourceVersion with only the changes after it", async () => {
    const { kc } = clients(standIn)
    const leases = kc.makeApiClient(CoordinationV1Api)
    await leases.createNamespacedLease({ namespace, body: { metadata: { name: "before" } } })
    const listed = await leases.listNamespacedLease({ namespace })
    await leases.createNamespacedLease({ namespace, body: { metadata: { name: "after" } } })
    await leases.deleteNamespacedLease({ name: "before", namespace })
    const seen: Array<string> = []
    const controller = await new Watch(kc).watch(
      `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`,
      { resourceVersion: listed.metadata?.resourceVersion },
      (type, lease) => seen.push(`${type} ${lease.metadata.name}`),
      () => {}
    )
    try {
      assert.isTrue(await until(async () => seen.length >= 2, 5_000), `saw ${seen}`)
      assert.deepStrictEqual(seen, ["ADDED after", "DELETED before"])
    } finally {
      controller.abort()
    }
    await leases.deleteNamespacedLease({ name: "after", namespace })
  })

  it("records services (with a ClusterIP) and ingresses, lists them by label and deletes them", async () => {
    const { kc, core } = clients(standIn)
    const networking = kc.makeApiClient(NetworkingV1Api)
    const service = await core.createNamespacedService({
      namespace,
      body: {
        metadata: { name: "web", labels: { app: "web" } },
        spec: { selector: { app: "web" }, ports: [{ port: 80, targetPort: 8000 }] }
      }
    })
    assert.match(service.spec!.clusterIP!, /^10\.96\.\d+\.\d+$/)
    assert.strictEqual(service.spec?.type, "ClusterIP")
    await networking.createNamespacedIngress({
      namespace,
      body: {
        metadata: { name: "web" },
        spec: {
          rules: [{
            host: "web.example",
            http: {
              paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "web", port: { number: 80 } } } }]
            }
          }]
        }
      }
    })
    assert.deepStrictEqual(
      (await core.listNamespacedService({ namespace, labelSelector: "app in (web,api)" })).items.map((s) =>
        s.metadata?.name
      ),
      ["web"]
    )
    assert.deepStrictEqual((await core.listNamespacedService({ namespace, labelSelector: "app!=web" })).items, [])
    assert.strictEqual(
      (await networking.readNamespacedIngress({ name: "web", namespace })).spec?.rules?.[0]?.host,
      "web.example"
    )
    await core.deleteNamespacedService({ name: "web", namespace })
    await networking.deleteNamespacedIngress({ name: "web", namespace })
    assert.deepStrictEqual((await networking.listNamespacedIngress({ namespace })).items, [])
    const gone = await core.readNamespacedService({ name: "web", namespace }).then(
      () => 200,
      (e: ApiException<string>) => e.code
    )
    assert.strictEqual(gone, 404)
  })

  it("close() removes every container and volume it made", async () => {
    const { core } = clients(standIn)
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: "left-running" },
        spec: {
          containers: [{
            name: "main",
            image,
            command: ["sleep", "300"],
            volumeMounts: [{ name: "scratch", mountPath: "/scratch" }]
          }],
          volumes: [{ name: "scratch", emptyDir: {} }]
        }
      }
    })
    await core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: "left-claim" },
        spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } }
      }
    })
    await until(async () => (await leftovers(standIn.instance)).containers.length > 0, 20_000)
    const before = await leftovers(standIn.instance)
    assert.lengthOf(before.containers, 1)
    assert.lengthOf(before.volumes, 2)
    await standIn.close()
    assert.deepStrictEqual(await leftovers(standIn.instance), { containers: [], volumes: [] })
  })
})
