/**
 * The kubelet's readiness probe, `httpGet` only: a GET of the container's
 * bridge IP, success on 200-399, failure messages worded as the kubelet's
 * (`HTTP probe failed with statuscode: 503`, `Get "http://...": connect ...`).
 */
import type { V1Container, V1Probe } from "@kubernetes/client-node"

/** The probe's port as a number (a named port is looked up in the container's ports). */
const portOf = (container: V1Container, port: number | string): number =>
  typeof port === "number" ? port : container.ports?.find((p) => p.name === port)?.containerPort ?? Number(port)

/** One probe: undefined on success, else the kubelet's failure text. */
export const probeOnce = async (container: V1Container, probe: V1Probe, ip: string): Promise<string | undefined> => {
  const action = probe.httpGet!
  const url = `http://${action.host ?? ip}:${portOf(container, action.port)}${action.path ?? "/"}`
  try {
    const response = await fetch(url, {
      headers: Object.fromEntries((action.httpHeaders ?? []).map((header) => [header.name, header.value])),
      signal: AbortSignal.timeout((probe.timeoutSeconds ?? 1) * 1000)
    })
    await response.body?.cancel()
    return response.status >= 200 && response.status < 400
      ? undefined
      : `HTTP probe failed with statuscode: ${response.status}`
  } catch (error) {
    const cause = (error as { cause?: { message?: string } }).cause?.message ?? (error as Error).message
    return `Get "${url}": ${cause}`
  }
}

/** Why the stand-in cannot run `probe` (exec, tcpSocket and grpc probes are not implemented), if it cannot. */
export const unsupportedProbe = (probe: V1Probe | undefined): string | undefined =>
  probe === undefined || probe.httpGet !== undefined
    ? undefined
    : "Unsupported value: the stand-in runs httpGet readiness probes only"
