/**
 * A throw-away certificate authority for `startStandIn({ tls: true })`: a
 * self-signed P-256 certificate for 127.0.0.1 (one day), made by the openssl
 * CLI (Node cannot issue X.509 certificates), so the kubeconfig can carry
 * `certificate-authority-data` and client-node verifies the server as on a cluster.
 */
import { spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"

export const selfSignedCertificate = (directory: string) => {
  const key = join(directory, "tls.key")
  const cert = join(directory, "tls.crt")
  const result = spawnSync("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-days",
    "1",
    "-subj",
    "/CN=k8s-standin",
    "-addext",
    "subjectAltName=IP:127.0.0.1",
    "-keyout",
    key,
    "-out",
    cert
  ], { encoding: "utf8" })
  if (result.status !== 0) throw new Error(`openssl could not make the stand-in's certificate: ${result.stderr}`)
  return { key: readFileSync(key), cert: readFileSync(cert) }
}
