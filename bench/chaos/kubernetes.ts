/**
 * Group kubernetes: KubernetesRuntime attacked on the stand-in cluster (test/kubernetes/standin:
 * the real REST API, pods as containers on this engine), two sessions side by side, a bare pod and
 * an agent-sandbox Sandbox. From inside one pod, requests to the other's server with no key, its
 * own key, guesses and the neighbour's digest: none may be answered (the neighbour's key, which a
 * pod never has, must be, or the row proves nothing). What the API shows of each session (pod
 * spec, env, volumes, Sandbox, service, PVC) and what a command finds in its pod: never the key.
 * Wrong keys on the owner's port-forwarded endpoint: none accepted. An app port's listener
 * (`appPorts`, carried by the port-forward, with no key of its own): reached on none of this
 * host's other addresses, and closed with its runtime. An owner SIGKILLed mid-start,
 * in each mode: nothing it owned left after one reaper pass. Hostile options (session ids, label
 * and annotation keys, our own labels, names): each an InvalidOptionsError, nothing created.
 */
import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type KubernetesObject
} from "@kubernetes/client-node"
import { Effect, Layer, ManagedRuntime } from "effect"
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { join } from "node:path"
import { Runtime, type RuntimeShape } from "../../src/index.ts"
import { KubernetesRuntime, type KubernetesRuntimeOptions } from "../../src/kubernetes.ts"
import { reapOrphans } from "../../src/providers/kubernetes/reaper.ts"
import { startStandIn } from "../../test/kubernetes/standin/server.ts"
import { benchBaseImage } from "../docker.ts"
import { atLeast, atMost, type GroupContext, type Row, waitFor } from "./rows.ts"
import { accepts, outerAddresses } from "./server.ts"

const NAMESPACE = "default"
/** The app port the bare pod's agent serves on, reached through the owner's listener. */
const APP_PORT = 9100
const NODE_IN_POD = "/opt/effect-sandbox/bin/node"
const OWNER_SCRIPT = join(import.meta.dirname, "..", "..", "test", "kubernetes", "fixtures", "runtimeOwner.ts")
/** Short owner terms, so a killed owner is provably gone within seconds. */
const TERMS = { renewEvery: "1 second", staleAfter: "3 seconds" }

interface Session {
  readonly rt: RuntimeShape
  readonly key: string
  readonly pod: string
  readonly dispose: () => Promise<void>
}

/** A session, and its key as the owner reads it back (its Secret, as `attach` does). */
const startSession = async (kc: KubeConfig, options: KubernetesRuntimeOptions): Promise<Session> => {
  const runtime = ManagedRuntime.make(KubernetesRuntime.layer(options))
  const rt = await runtime.runPromise(Runtime)
  const pod = `effect-sandbox-${rt.info.id}`
  const secret = await kc.makeApiClient(CoreV1Api).readNamespacedSecret({ name: `${pod}-key`, namespace: NAMESPACE })
  const key = Buffer.from(secret.data!["session-api-key"]!, "base64").toString("utf8")
  return { rt, key, pod, dispose: () => runtime.dispose() }
}

const run = async (session: Session, command: string) => {
  const observation = await Effect.runPromise(session.rt.runCommand(command))
  return String((observation as { content?: unknown }).content ?? "").trim()
}

/**
 * From inside `from`'s pod, one request per key to `/list_files` of the server at `ip`: the
 * status codes, in order (0: no answer). The keys reach the script base64-encoded in argv.
 */
const probeFromPod = async (from: Session, ip: string, keys: ReadonlyArray<string | undefined>) => {
  const script = `
const keys = JSON.parse(Buffer.from(process.argv[1], "base64").toString())
const codes = []
for (const key of keys) {
  const headers = { "content-type": "application/json", ...(key === null ? {} : { "x-session-api-key": key }) }
  codes.push(await fetch("http://${ip}:8080/list_files", { method: "POST", headers, body: '{"path":"/workspace"}' })
    .then((r) => r.status, () => 0))
}
console.log(codes.join(" "))`
  const encoded = Buffer.from(JSON.stringify(keys.map((k) => k ?? null))).toString("base64")
  const out = await run(from, `${NODE_IN_POD} --input-type=module -e '${script.replaceAll("'", "'\\''")}' ${encoded}`)
  return out.split("\n").at(-1)!.split(" ").map(Number)
}

/**
 * Keys a neighbour might try: none, empty, its own, guesses, the target's digest, near-misses of
 * the target's key (not padded with spaces: HTTP strips a header value's surrounding whitespace).
 */
const hostileKeys = (own: string, target: string, digest: string, random: number) => [
  undefined,
  "",
  own,
  digest,
  target.toUpperCase(),
  target.slice(0, -1),
  `${target}x`,
  `${target.slice(0, 16)} ${target.slice(16)}`,
  target.slice(1),
  `Bearer ${target}`,
  ...Array.from({ length: random }, () => randomBytes(24).toString("base64url"))
]

/** Every object of the session the API shows (pods, services, PVCs, Secrets but the key's, Sandboxes), as JSON. */
const apiView = async (kc: KubeConfig, sessionId: string) => {
  const core = kc.makeApiClient(CoreV1Api)
  const custom = kc.makeApiClient(CustomObjectsApi)
  const labelSelector = `effect-sandbox.session=${sessionId}`
  const selector = { namespace: NAMESPACE, labelSelector }
  const sandboxes = await custom.listNamespacedCustomObject({
    group: "agents.x-k8s.io",
    version: "v1alpha1",
    namespace: NAMESPACE,
    plural: "sandboxes",
    labelSelector
  }) as { items: Array<KubernetesObject> }
  const secrets = (await core.listNamespacedSecret(selector)).items.filter((s) => !s.metadata!.name!.endsWith("-key"))
  return {
    pods: (await core.listNamespacedPod(selector)).items,
    objects: [
      ...(await core.listNamespacedService(selector)).items,
      ...(await core.listNamespacedPersistentVolumeClaim(selector)).items,
      ...secrets,
      ...sandboxes.items
    ]
  }
}

/** Places a pod reads the key Secret from: a Secret volume, a `secretKeyRef`, an `envFrom` of it. */
const keySecretMounts = (pod: { spec?: unknown }, secretName: string) =>
  JSON.stringify(pod.spec ?? {}).split(`"${secretName}"`).length - 1

/** `grep` inside the pod for the key (handed over in halves): env, server's environ and argv, files. */
const keyInsidePod = async (session: Session) => {
  const [a, b] = [session.key.slice(0, 16), session.key.slice(16)]
  const out = await run(
    session,
    [
      `A=${a}; B=${b}; K="$A$B"`,
      `env | grep -cF -- "$K"`,
      `cat /proc/1/environ /proc/1/cmdline | grep -caF -- "$K"`,
      `grep -rlF -- "$K" /tmp /workspace /home /run /etc /opt/effect-sandbox 2>/dev/null | wc -l`
    ].join("; ")
  )
  return out.split("\n").reduce((n, line) => n + (Number(line) || 0), 0)
}

/** Wrong keys against the owner's endpoint (`info.urls.actionServer`): how many got a 200, and whether the key did. */
const endpointKeys = async (session: Session, random: number) => {
  const url = session.rt.info.urls["actionServer"]!
  const send = (key: string | undefined) =>
    fetch(`${url}/list_files`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(key === undefined ? {} : { "x-session-api-key": key }) },
      body: JSON.stringify({ path: "/workspace" })
    }).then((response) => response.status)
  let accepted = 0
  const keys = hostileKeys(randomBytes(24).toString("base64url"), session.key, "", random)
  for (const key of keys) {
    if ((await send(key)) !== 200) continue
    accepted++
    console.log(`  accepted on ${session.pod}: ${JSON.stringify(key)}`)
  }
  return { tried: keys.length, accepted, rightKey: (await send(session.key)) === 200 }
}

/** `Kind/name` of each object. */
const names = (items: ReadonlyArray<KubernetesObject>, kind: string) => items.map((i) => `${kind}/${i.metadata!.name}`)

/** What the owner's Lease still labels in the namespace (leases included), after a reaper pass. */
const ownedObjects = async (kc: KubeConfig) => {
  const core = kc.makeApiClient(CoreV1Api)
  const custom = kc.makeApiClient(CustomObjectsApi)
  const selector = { namespace: NAMESPACE, labelSelector: "effect-sandbox.owner" }
  const sandboxes = await custom.listNamespacedCustomObject({
    group: "agents.x-k8s.io",
    version: "v1alpha1",
    namespace: NAMESPACE,
    plural: "sandboxes",
    labelSelector: "effect-sandbox.owner"
  }) as { items: Array<KubernetesObject> }
  return [
    ...names((await core.listNamespacedPod(selector)).items, "Pod"),
    ...names((await core.listNamespacedService(selector)).items, "Service"),
    ...names((await core.listNamespacedSecret(selector)).items, "Secret"),
    ...names(
      (await core.listNamespacedPersistentVolumeClaim({
        namespace: NAMESPACE,
        labelSelector: "effect-sandbox.owner,effect-sandbox.delete-workspace=true"
      })).items,
      "PersistentVolumeClaim"
    ),
    ...names(sandboxes.items, "Sandbox"),
    ...names((await kc.makeApiClient(CoordinationV1Api).listNamespacedLease({ namespace: NAMESPACE })).items, "Lease")
  ]
}

/**
 * An owner process (test/kubernetes/fixtures/runtimeOwner.ts) SIGKILLed as soon as the first
 * object of its session appears (its key Secret: the start has begun, nothing is ready); then,
 * once its Lease is stale, one reaper pass. What it owned and is still there, by name.
 */
const killMidStart = async (kc: KubeConfig, kubeconfigPath: string, image: string, mode: "pod" | "agentSandbox") => {
  const sessionId = `mid-${randomBytes(4).toString("hex")}`
  const options = { ownerLease: TERMS, deleteWorkspace: true, mode }
  const owner = spawn(process.execPath, [OWNER_SCRIPT, kubeconfigPath, image, sessionId, JSON.stringify(options)], {
    stdio: "ignore"
  })
  const core = kc.makeApiClient(CoreV1Api)
  const begun = await waitFor(
    async () =>
      (await core.listNamespacedSecret({ namespace: NAMESPACE, labelSelector: `effect-sandbox.session=${sessionId}` }))
        .items.length > 0,
    120_000,
    20
  )
  owner.kill("SIGKILL")
  if (begun === null) throw new Error(`owner of ${sessionId} made nothing within 120 s`)
  await new Promise((resolve) => owner.once("exit", resolve))
  // Stale 3 s after its last renewal, by the server's clock (whole seconds).
  await new Promise((resolve) => setTimeout(resolve, 4_500))
  await Effect.runPromise(reapOrphans(kc, NAMESPACE, { clockSkew: 0 }))
  // Deleted pods terminate for a moment; Sandboxes go with their pod.
  await waitFor(async () => (await ownedObjects(kc)).length === 0, 30_000)
  return ownedObjects(kc)
}

/** Options no start may accept: hostile session ids, label and annotation keys and values, our own labels, names. */
const HOSTILE_OPTIONS: ReadonlyArray<KubernetesRuntimeOptions> = [
  { sessionId: "../etc" },
  { sessionId: "a b" },
  { sessionId: "x;rm -rf /" },
  { sessionId: "Upper" },
  { sessionId: "-lead" },
  { sessionId: "x".repeat(41) },
  { sessionId: "a\nb" },
  { labels: { "effect-sandbox.owner": "effect-sandbox-owner-0000000000" } },
  { labels: { "effect-sandbox.session": "other" } },
  { labels: { "effect-sandbox.managed": "false" } },
  { labels: { team: "a,effect-sandbox.owner=x" } },
  { labels: { team: "a b" } },
  { labels: { "a=b": "c" } },
  { labels: { "x/y/z": "c" } },
  { labels: { [`${"a".repeat(64)}`]: "c" } },
  { annotations: { "bad key": "v" } },
  { annotations: { "effect-sandbox.renew-every-ms": "1" } },
  { namespace: "kube-system/../default" },
  { warmPoolTemplate: "../tpl" },
  { warmPoolTemplate: "tpl", mode: "pod" },
  { warmPool: "pool" },
  { mode: "everything" as "pod" },
  { imagePullSecret: "a/b" },
  { nodeSelector: { zone: "a,b" } }
]

export const kubernetesRows = async ({ quick }: GroupContext): Promise<ReadonlyArray<Row>> => {
  const cluster = await startStandIn()
  const kc = new KubeConfig()
  kc.loadFromFile(cluster.kubeconfigPath)
  const image = benchBaseImage()
  const rows: Array<Row> = []
  const sessions: Array<Session> = []
  try {
    const common = { kubeConfig: kc, baseImage: image, deleteWorkspace: true }
    const bare = await startSession(kc, { ...common, mode: "pod", appPorts: [APP_PORT] })
    sessions.push(bare)
    const boxed = await startSession(kc, { ...common, mode: "agentSandbox" })
    sessions.push(boxed)
    const random = quick ? 8 : 64

    // From each pod to the other's server.
    let answered = 0
    let tried = 0
    let reachable = 0
    for (const [from, to] of [[bare, boxed], [boxed, bare]] as const) {
      const target = await kc.makeApiClient(CoreV1Api).readNamespacedPod({ name: to.pod, namespace: NAMESPACE })
      const ip = target.status!.podIP!
      const digest = target.spec!.containers[0]!.env!.find((e) => e.name.endsWith("_SHA256"))!.value!
      const keys = hostileKeys(from.key, to.key, digest, random)
      const codes = await probeFromPod(from, ip, [...keys, to.key])
      tried += keys.length
      const open = keys.filter((_, i) => codes[i] !== 401 && codes[i] !== 403)
      if (open.length > 0) console.log(`  answered ${from.pod} -> ${to.pod}: ${JSON.stringify(open)}`)
      answered += open.length
      if (codes.at(-1) === 200) reachable++
    }
    rows.push(
      atMost(`kubernetes: neighbour pod's requests answered without its key (of ${tried})`, answered, "requests", 0)
    )
    rows.push(
      atLeast("kubernetes: neighbour pods reached with the right key (the row above is real)", reachable, "pods", 2)
    )

    // The key in what the API shows, and inside the pods.
    let shown = 0
    let mounts = 0
    let inside = 0
    for (const session of sessions) {
      const view = await apiView(kc, session.rt.info.id)
      for (const object of [...view.pods, ...view.objects]) if (JSON.stringify(object).includes(session.key)) shown++
      for (const pod of view.pods) mounts += keySecretMounts(pod, `${session.pod}-key`)
      inside += await keyInsidePod(session)
    }
    rows.push(
      atMost("kubernetes: API objects (pod spec and env, Sandbox, service, PVC) showing the key", shown, "objects", 0)
    )
    rows.push(atMost("kubernetes: pod references to the key Secret (volume, secretKeyRef, envFrom)", mounts, "refs", 0))
    rows.push(atMost("kubernetes: places in the pods holding the key (env, /proc/1, files)", inside, "places", 0))

    // Wrong keys through the port-forward.
    let accepted = 0
    let sent = 0
    let rightKeys = 0
    for (const session of sessions) {
      const got = await endpointKeys(session, random)
      accepted += got.accepted
      sent += got.tried
      if (got.rightKey) rightKeys++
    }
    rows.push(
      atMost(`kubernetes: wrong keys accepted on the port-forwarded endpoint (of ${sent})`, accepted, "keys", 0)
    )
    rows.push(atLeast("kubernetes: endpoints opened by the right key", rightKeys, "endpoints", 2))

    // The app port's listener: open to this host's users by design, to nobody beyond it, gone on release.
    const app = new URL(bare.rt.info.urls[`app-${APP_PORT}`]!)
    await run(
      bare,
      `nohup ${NODE_IN_POD} -e "require('http').createServer((q, s) => s.end('app')).listen(${APP_PORT})" ` +
        ">/dev/null 2>&1 &"
    )
    const served = await waitFor(
      () => fetch(app).then((r) => r.text(), () => "").then((text) => text === "app"),
      10_000
    )
    rows.push(
      atLeast(
        "kubernetes: app port answering through its listener (the rows below are real)",
        served === null ? 0 : 1,
        "ports",
        1
      )
    )
    const outer = outerAddresses()
    let beyond = 0
    for (const address of outer) if (await accepts(address, Number(app.port), 1_000)) beyond++
    rows.push(
      atMost(
        `kubernetes: app-port listener reached on this host's other addresses (of ${outer.length})`,
        app.hostname === "127.0.0.1" ? beyond : beyond + 1,
        "addresses",
        0
      )
    )
    for (const session of sessions.splice(0)) await session.dispose()
    rows.push(
      atMost(
        "kubernetes: app-port listeners still open after release",
        (await accepts("127.0.0.1", Number(app.port), 1_000)) ? 1 : 0,
        "listeners",
        0
      )
    )

    // Owners killed mid-start.
    for (const mode of ["pod", "agentSandbox"] as const) {
      const left = await killMidStart(kc, cluster.kubeconfigPath, image, mode)
      if (left.length > 0) console.log(`  left after a reaper pass (${mode}): ${left.join(", ")}`)
      rows.push(
        atMost(
          `kubernetes: owner killed mid-start (${mode}): owned objects after one reaper pass`,
          left.length,
          "objects",
          0
        )
      )
    }

    // Hostile options.
    let notRefused = 0
    for (const options of HOSTILE_OPTIONS) {
      const outcome = await Effect.runPromise(
        Layer.build(KubernetesRuntime.layer({ ...common, ...options })).pipe(
          Effect.scoped,
          Effect.flip,
          Effect.map((error) => error._tag),
          Effect.orElseSucceed(() => "started")
        )
      )
      if (outcome !== "InvalidOptionsError") {
        notRefused++
        console.log(`  not refused as invalid: ${JSON.stringify(options)}`)
      }
    }
    const made = await ownedObjects(kc)
    const pods = (await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: NAMESPACE })).items.length
    rows.push(
      atMost(
        `kubernetes: hostile options not refused with InvalidOptionsError (of ${HOSTILE_OPTIONS.length})`,
        notRefused,
        "options",
        0
      )
    )
    rows.push(atMost("kubernetes: objects made by refused options", made.length + pods, "objects", 0))
  } finally {
    for (const session of sessions) await session.dispose().catch(() => {})
    await cluster.close()
  }
  return rows
}
