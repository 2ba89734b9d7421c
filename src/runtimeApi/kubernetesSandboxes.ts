/**
 * The runtime API's sandboxes on a Kubernetes cluster, made of the Kubernetes engine's pieces
 * KubernetesRuntime's driver is made of too (engines/kubernetes/: the client, podSpec's pod,
 * manifests' Secret, PVC and service, the pod watch, startErrors' reading of pod failures). Each sandbox is, by the name of its runtime id:
 * - a Secret, the sandbox's anchor: labelled with the API's prefix, the session and runtime ids;
 *   holding the session key (fresh per sandbox) and the pod template (resume makes the pod again
 *   from it; it may hold the request's environment, hence a Secret); annotated with the image,
 *   creation time, resource factor, server port, and `paused` while paused;
 * - the workspace PVC (kept on stop unless `deleteWorkspace`, as KubernetesRuntime keeps it);
 * - a ClusterIP service to the server and app ports (and VS Code's, for a sandbox that gets it);
 * - the pod (deleted on pause, made again on resume: files kept, processes not).
 * Nothing is held in this process but port-forward listeners (podEndpoints.ts): a restarted API
 * server, or another replica, reads the same sandboxes back from the cluster. The sandboxes carry
 * no owner Lease: they outlive the API server on purpose (the idle sweep and `/stop` end them).
 */
import type { V1Pod, V1PodTemplateSpec, V1Secret } from "@kubernetes/client-node"
import { Effect, Layer, Redacted } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { LABEL } from "../engines/docker/labels.ts"
import { type Kube, kubeCall, kubeCallOrMissing, makeKube } from "../engines/kubernetes/client.ts"
import {
  DELETE_WORKSPACE_LABEL,
  type ResourceNames,
  resourceNames,
  SESSION_LABEL,
  sessionLabels
} from "../engines/kubernetes/labels.ts"
import { KEY_FIELD, keySecret, serverService, workspaceClaim } from "../engines/kubernetes/manifests.ts"
import { checkPodOptions, connectMode, type PodOptions } from "../engines/kubernetes/podOptions.ts"
import { createPod, deletePod } from "../engines/kubernetes/pods.ts"
import { runtimeImage } from "../engines/kubernetes/runtimeImage.ts"
import { podLogTail } from "../engines/kubernetes/startErrors.ts"
import { DEFAULT_SANDBOX_UID, DEFAULT_SANDBOX_USERNAME } from "../runtimeImage/sandboxUser.ts"
import type { SandboxConfig } from "../schema/SandboxConfig.ts"
import { ApiError, internalError } from "./errors.ts"
import { podStateOf, sandboxPod, sessionStatusOf } from "./kubernetesPods.ts"
import { podEndpoints } from "./podEndpoints.ts"
import { type Sandbox, SANDBOX_APP_PORTS, Sandboxes } from "./sandboxes.ts"
import type { StartRequest } from "./schemas.ts"
import { withSessionStart } from "./sessionStart.ts"
import { servesVsCode, VSCODE_PORT } from "./vscodePlugin.ts"

export interface KubernetesSandboxesOptions {
  /** `SANDBOX_*`: the base image of the default runtime image, its startup variables. */
  readonly sandbox: SandboxConfig
  /**
   * The cluster and the pods: `kubeConfig` (default `KUBECONFIG`, ~/.kube/config or in-cluster),
   * `namespace`, `connect`, `pvcStorageSize`, `pvcStorageClass`, `deleteWorkspace`, `image`,
   * `imagePullSecret`, `nodeSelector`, ... (the KubernetesRuntime options a pod is made with).
   */
  readonly kubernetes: PodOptions
  /** Most sandboxes running or paused at once (429 beyond); unlimited when undefined. */
  readonly maxSandboxes?: number | undefined
  /** What `resource_factor` 1 gets: CPU requested (default 1) and memory limit (default 2 GiB, half requested). */
  readonly cpus?: number | undefined
  readonly memoryBytes?: number | undefined
  /** The label value that marks this API's sandboxes (default `effect-sandbox-api`): it sees only those. */
  readonly labelPrefix?: string | undefined
  /** Serve VS Code to sandboxes whose command asks for the `vscode` plugin (proxy mode; vscodePlugin.ts). */
  readonly vscode?: boolean | undefined
}

/** Annotations on a sandbox's Secret. */
const ANNOTATION = {
  image: "effect-sandbox.image",
  serverPort: "effect-sandbox.server-port",
  /** Present when the sandbox gets VS Code: its port. */
  vscodePort: "effect-sandbox.vscode-port",
  paused: "effect-sandbox.paused"
} as const

/** The Secret's data key of the pod template. */
const TEMPLATE_FIELD = "pod-template"

/** A label value (what the session id becomes on every object): 63 characters, alphanumeric at both ends. */
const LABEL_VALUE = /^[a-z0-9]([a-z0-9_.-]{0,61}[a-z0-9])?$/

const internal = internalError()

const decoded = (secret: V1Secret, field: string) => {
  const value = secret.data?.[field]
  return value === undefined ? undefined : Buffer.from(value, "base64").toString("utf8")
}

/** The resources of a sandbox with `factor`: CPU requested, memory limited (half of it requested). */
const resourcesOf = (options: KubernetesSandboxesOptions, factor: number) => {
  const mebibytes = Math.round(((options.memoryBytes ?? 2 * 1024 ** 3) / 1024 ** 2) * factor)
  return {
    requests: { cpu: String((options.cpus ?? 1) * factor), memory: `${Math.round(mebibytes / 2)}Mi` },
    limits: { memory: `${mebibytes}Mi` }
  }
}

/** The RuntimeClass of OpenHands' `runtime_class`. */
const runtimeClasses = { "sysbox-runc": "sysbox-runc", sysbox: "sysbox-runc", gvisor: "gvisor" } as const

/**
 * The Kubernetes backend of the runtime API. Its options are checked and the cluster connected as
 * the layer is built: a bad option or an unreachable kubeconfig fails it, before the API listens.
 */
export const kubernetesSandboxes = (options: KubernetesSandboxesOptions) =>
  Layer.effect(
    Sandboxes,
    Effect.gen(function*() {
      // Worded as KubernetesRuntime's: the same options of the same pods.
      yield* checkPodOptions("KubernetesRuntime options", options.kubernetes)
      const kube: Kube = yield* makeKube(options.kubernetes)
      const { core, namespace } = kube
      const prefix = options.labelPrefix ?? "effect-sandbox-api"
      const deleteWorkspace = options.kubernetes.deleteWorkspace === true
      const endpoints = yield* podEndpoints(kube, connectMode(options.kubernetes.connect))
      const mergePatch = kube.k8s.setHeaderOptions("Content-Type", kube.k8s.PatchStrategy.MergePatch)
      const ours = `${LABEL.runtimeApi}=${prefix}`
      const user = { name: DEFAULT_SANDBOX_USERNAME, id: options.kubernetes.userId ?? DEFAULT_SANDBOX_UID }

      const secretsWith = (selector: string) =>
        kubeCall(
          `list the runtime API's Secrets (${selector})`,
          () => core.listNamespacedSecret({ namespace, labelSelector: selector })
        ).pipe(Effect.map((list) => list.items), Effect.mapError(internal))

      const podOf = (names: ResourceNames) =>
        kubeCallOrMissing(`read pod ${names.pod}`, () => core.readNamespacedPod({ name: names.pod, namespace })).pipe(
          Effect.mapError(internal)
        )

      /** The sandbox a Secret anchors, with its pod of the moment (read when not given). */
      const sandboxOf = (secret: V1Secret, pod?: V1Pod) =>
        Effect.gen(function*() {
          const labels = secret.metadata?.labels ?? {}
          const annotations = secret.metadata?.annotations ?? {}
          const runtimeId = labels[LABEL.runtimeId] ?? ""
          const names = resourceNames(runtimeId)
          const current = pod ?? (yield* podOf(names))
          const status = sessionStatusOf(current, annotations[ANNOTATION.paused] === "true")
          const reachable = status !== "stopped"
          const serverUrl = reachable
            ? yield* endpoints.url(names, Number(annotations[ANNOTATION.serverPort]))
            : undefined
          const workHosts = reachable
            ? Object.fromEntries(
              yield* Effect.forEach(
                SANDBOX_APP_PORTS,
                (port) => Effect.map(endpoints.url(names, port), (url) => [url, port] as const)
              )
            )
            : {}
          const vscodePort = annotations[ANNOTATION.vscodePort]
          const vscodeUrl = reachable && vscodePort !== undefined
            ? yield* endpoints.url(names, Number(vscodePort))
            : undefined
          return {
            runtimeId,
            sessionId: labels[SESSION_LABEL] ?? "",
            sessionApiKey: Redacted.make(decoded(secret, KEY_FIELD) ?? ""),
            status,
            serverUrl,
            workHosts,
            vscodeUrl,
            image: annotations[ANNOTATION.image] ?? "",
            createdAt: annotations[LABEL.createdAt] ?? secret.metadata?.creationTimestamp?.toISOString() ?? "",
            resourceFactor: Number(annotations[LABEL.resourceFactor] ?? "1")
          } satisfies Sandbox
        })

      const first = (selector: string) =>
        Effect.flatMap(
          secretsWith(`${ours},${selector}`),
          (secrets) => secrets[0] === undefined ? Effect.succeed(undefined) : sandboxOf(secrets[0])
        )

      const bySession = (sessionId: string) =>
        LABEL_VALUE.test(sessionId) ? first(`${SESSION_LABEL}=${sessionId}`) : Effect.succeed(undefined)
      const byRuntime = (runtimeId: string) => first(`${LABEL.runtimeId}=${runtimeId}`)

      const list = Effect.gen(function*() {
        const secrets = yield* secretsWith(ours)
        const pods = yield* kubeCall(
          "list the runtime API's pods",
          () => core.listNamespacedPod({ namespace, labelSelector: ours })
        ).pipe(Effect.mapError(internal))
        const byName = new Map(pods.items.map((pod) => [pod.metadata?.name, pod]))
        return yield* Effect.forEach(secrets, (secret) => {
          const names = resourceNames(secret.metadata?.labels?.[LABEL.runtimeId] ?? "")
          return sandboxOf(secret, byName.get(names.pod))
        })
      })

      /** The sandbox's Secret (404 when it is gone). */
      const secretOf = (sandbox: Sandbox) =>
        Effect.gen(function*() {
          const names = resourceNames(sandbox.runtimeId)
          const secret = yield* kubeCallOrMissing(
            `read Secret ${names.keySecret}`,
            () => core.readNamespacedSecret({ name: names.keySecret, namespace })
          ).pipe(Effect.mapError(internal))
          if (secret === undefined) {
            return yield* new ApiError({ status: 404, detail: `Runtime ${sandbox.runtimeId} not found` })
          }
          return { names, secret }
        })

      const markPaused = (names: ResourceNames, paused: boolean) =>
        kubeCall(
          `mark Secret ${names.keySecret} ${paused ? "paused" : "running"}`,
          () =>
            core.patchNamespacedSecret(
              {
                name: names.keySecret,
                namespace,
                body: { metadata: { annotations: { [ANNOTATION.paused]: paused ? "true" : null } } }
              },
              mergePatch
            )
        ).pipe(Effect.mapError(internal))

      /** Delete every object of the sandbox, the pod first (waited for: the PVC is free once it is gone), the Secret last. */
      const removeObjects = (names: ResourceNames, dropWorkspace: boolean) =>
        Effect.gen(function*() {
          yield* deletePod(kube, names.pod)
          yield* kubeCallOrMissing(
            `delete service ${names.service}`,
            () => core.deleteNamespacedService({ name: names.service, namespace })
          )
          if (dropWorkspace) {
            yield* kubeCallOrMissing(
              `delete PVC ${names.pvc}`,
              () => core.deleteNamespacedPersistentVolumeClaim({ name: names.pvc, namespace })
            )
          }
          yield* kubeCallOrMissing(
            `delete Secret ${names.keySecret}`,
            () => core.deleteNamespacedSecret({ name: names.keySecret, namespace })
          )
          yield* endpoints.forget(names)
        }).pipe(Effect.mapError(internal))

      /** Make a new sandbox's objects and pod (not waiting for it: clients poll `/runtime/{id}`); a failure leaves none. */
      const create = Effect.fn("runtimeApi.kubernetes.create")(function*(request: StartRequest) {
        if (!LABEL_VALUE.test(request.session_id)) {
          return yield* new ApiError({
            status: 400,
            detail: "session_id: on Kubernetes a session id is a label value: at most 63 characters, " +
              "starting and ending with a letter or digit"
          })
        }
        const image = request.image ??
          (yield* runtimeImage(options.kubernetes, options.sandbox, user, () => Effect.void).pipe(
            Effect.mapError(internal)
          ))
        const runtimeId = `rt-${randomBytes(12).toString("hex")}`
        const names = resourceNames(runtimeId)
        const key = randomBytes(24).toString("base64url")
        const factor = request.resource_factor ?? 1
        const labels = sessionLabels({
          sessionId: request.session_id,
          extra: { ...options.kubernetes.labels, [LABEL.runtimeApi]: prefix, [LABEL.runtimeId]: runtimeId }
        })
        const runtimeClassName = request.runtime_class == null
          ? options.kubernetes.runtimeClassName
          : runtimeClasses[request.runtime_class]
        const vscode = servesVsCode(request, options.vscode === true)
        const { template, serverPort } = sandboxPod({
          request,
          vscode,
          image,
          labels,
          claimName: names.pvc,
          keySecret: names.keySecret,
          keySha256: createHash("sha256").update(key).digest("hex"),
          options: {
            ...options.kubernetes,
            resources: resourcesOf(options, factor),
            ...(runtimeClassName === undefined ? {} : { runtimeClassName })
          },
          sandbox: options.sandbox,
          user
        })
        const meta = (name: string) => ({ name, labels, annotations: options.kubernetes.annotations ?? {} })
        const secret = keySecret(meta(names.keySecret), key)
        const anchor: V1Secret = {
          ...secret,
          metadata: {
            ...secret.metadata,
            annotations: {
              ...secret.metadata?.annotations,
              [ANNOTATION.image]: image,
              [ANNOTATION.serverPort]: String(serverPort),
              ...(vscode ? { [ANNOTATION.vscodePort]: String(VSCODE_PORT) } : {}),
              [LABEL.createdAt]: new Date().toISOString(),
              [LABEL.resourceFactor]: String(factor)
            }
          },
          stringData: { ...secret.stringData, [TEMPLATE_FIELD]: JSON.stringify(template) }
        }
        const claim = workspaceClaim(
          deleteWorkspace
            ? { ...meta(names.pvc), labels: { ...labels, [DELETE_WORKSPACE_LABEL]: "true" } }
            : meta(names.pvc),
          options.kubernetes
        )
        const service = serverService(meta(names.service), labels)
        yield* Effect.gen(function*() {
          yield* kubeCall(
            `create Secret ${names.keySecret}`,
            () => core.createNamespacedSecret({ namespace, body: anchor })
          )
          yield* kubeCall(
            `create PVC ${names.pvc}`,
            () => core.createNamespacedPersistentVolumeClaim({ namespace, body: claim })
          )
          yield* kubeCall(`create service ${names.service}`, () =>
            core.createNamespacedService({
              namespace,
              body: {
                ...service,
                spec: {
                  ...service.spec,
                  ports: [serverPort, ...SANDBOX_APP_PORTS, ...(vscode ? [VSCODE_PORT] : [])].map((port) => ({
                    name: `port-${port}`,
                    port,
                    targetPort: port
                  }))
                }
              }
            }))
          yield* createPod(kube, names.pod, template)
        }).pipe(
          Effect.mapError(internalError(Object.values(request.environment ?? {}))),
          // A fresh PVC, nobody's workspace yet: removed with the rest.
          Effect.onError(() => Effect.ignore(removeObjects(names, true)))
        )
        return runtimeId
      })

      const pause = (sandbox: Sandbox) =>
        Effect.gen(function*() {
          if (sandbox.status === "paused") return
          if (sandbox.status === "stopped") {
            return yield* new ApiError({ status: 409, detail: `Runtime ${sandbox.runtimeId} is stopped` })
          }
          const { names } = yield* secretOf(sandbox)
          // Marked first: from here on the pod's absence is a pause, not a crash.
          yield* markPaused(names, true)
          yield* deletePod(kube, names.pod).pipe(Effect.mapError(internal))
        })

      const resume = (sandbox: Sandbox) =>
        Effect.gen(function*() {
          if (sandbox.status === "running") return
          if (sandbox.status === "stopped") {
            return yield* new ApiError({
              status: 409,
              detail: `Runtime ${sandbox.runtimeId} is stopped: start the session again with /start`
            })
          }
          const { names, secret } = yield* secretOf(sandbox)
          const template = JSON.parse(decoded(secret, TEMPLATE_FIELD) ?? "{}") as V1PodTemplateSpec
          yield* createPod(kube, names.pod, template).pipe(Effect.mapError(internal))
          yield* markPaused(names, false)
        })

      const stop = (sandbox: Sandbox) => removeObjects(resourceNames(sandbox.runtimeId), deleteWorkspace)

      const podState = (sandbox: Sandbox) =>
        Effect.gen(function*() {
          const { names, secret } = yield* secretOf(sandbox)
          const pod = yield* podOf(names)
          const state = podStateOf(pod, secret.metadata?.annotations?.[ANNOTATION.paused] === "true")
          if (pod === undefined || (state.podStatus !== "failed" && state.podStatus !== "crashloopbackoff")) {
            return state
          }
          // Its current run's log, else the run before (a crash loop's container waits to start again).
          const current = yield* podLogTail(kube, names.pod)
          const output = current !== "" ? current : yield* podLogTail(kube, names.pod, true)
          return output === "" ? state : { ...state, lastOutput: output }
        })

      return yield* withSessionStart(
        { kind: "kubernetes", bySession, byRuntime, list, podState, pause, resume, stop },
        create,
        options.maxSandboxes
      )
    })
  )
