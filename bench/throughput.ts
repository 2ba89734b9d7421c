/**
 * The throughput row of `npm run bench` (group `throughput`): 50 Docker sandboxes, each sending
 * `echo hi` in a loop for a few seconds, and the actions per second of all of them together;
 * beside it, 50 bare containers (same image, a trivial Node HTTP server answering each POST with a
 * small JSON) hit in the same loops over keep-alive: the floor of HTTP to a container on this machine.
 * Both sides are measured at their steady state, after `WARM_ACTIONS` untimed actions a sandbox,
 * as the other rows warm up first: a server that has answered a few actions still runs its code
 * in V8's baseline tier (each of 50 servers sees 1/50 of the load, so it reaches the optimizing
 * tiers' invocation counts 50 times later than a lone one), and pays ~2× the CPU an action. The
 * rate of the first seconds, cold servers included, is printed in the row's note.
 */
import Docker from "dockerode"
import { ManagedRuntime } from "effect"
import { spawnSync } from "node:child_process"
import { Agent, request } from "node:http"
import { DockerRuntime } from "../src/docker.ts"
import { CmdRunAction, Runtime } from "../src/index.ts"
import { benchBaseImage } from "./docker.ts"
import { percentiles, QUICK, type Sample, single, skipped } from "./stats.ts"

type Record = (name: string, sample: Sample, baseline: string, base: Sample, note?: string) => void

const SANDBOXES = QUICK ? 3 : 50
const SECONDS = QUICK ? 0.5 : 5
/** Untimed actions each sandbox answers before the steady-state measurement (V8's tiers, above). */
const WARM_ACTIONS = QUICK ? 0 : 1000
const docker = new Docker()

/** Run `send` in `loops` concurrent loops for `SECONDS`; actions per second of all, and each action's latency. */
const loadFor = async (loops: ReadonlyArray<() => Promise<unknown>>) => {
  const durations: Array<number> = []
  const until = performance.now() + SECONDS * 1000
  const started = performance.now()
  await Promise.all(loops.map(async (send) => {
    while (performance.now() < until) {
      const start = performance.now()
      await send()
      durations.push(performance.now() - start)
    }
  }))
  return { perSecond: durations.length / ((performance.now() - started) / 1000), latency: percentiles(durations) }
}

/** Each loop's `send`, `WARM_ACTIONS` times, untimed. */
const warmUp = (loops: ReadonlyArray<() => Promise<unknown>>) =>
  Promise.all(loops.map(async (send) => {
    for (let i = 0; i < WARM_ACTIONS; i++) await send()
  }))

/** A bare container answering every request with a small JSON body; removed by `remove`. */
const bareServer = async (image: string) => {
  const container = await docker.createContainer({
    Image: image,
    Cmd: [
      "/opt/effect-sandbox/bin/node",
      "-e",
      "require('http').createServer((q,s)=>{q.resume();q.on('end',()=>s.end('{\"content\":\"hi\"}'))}).listen(8000)"
    ],
    ExposedPorts: { "8000/tcp": {} },
    HostConfig: { PortBindings: { "8000/tcp": [{ HostIp: "127.0.0.1", HostPort: "" }] } }
  })
  await container.start()
  const port = (await container.inspect()).NetworkSettings.Ports["8000/tcp"]![0]!.HostPort
  return { url: `http://127.0.0.1:${port}/execute_action`, remove: () => container.remove({ force: true }) }
}

const body = JSON.stringify({ action: { action: "run", args: { command: "echo hi", blocking: true } } })

/** One POST over `agent`'s kept-alive connections; its response body read to the end. */
const post = (url: string, agent: Agent): Promise<string> =>
  new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", agent, headers: { "content-type": "application/json" } }, (response) => {
      let text = ""
      response.setEncoding("utf8").on("data", (chunk: string) => (text += chunk)).on("end", () => resolve(text))
    })
    req.on("error", reject).end(body)
  })

export const throughputRows = async (record: Record) => {
  if (spawnSync("docker", ["info"], { stdio: "ignore" }).status !== 0) {
    skipped("throughput row skipped: no engine answers `docker info`")
    return
  }
  const runtimes = Array.from(
    { length: SANDBOXES },
    () => ManagedRuntime.make(DockerRuntime.layer({ baseImage: benchBaseImage() }))
  )
  let ours: Awaited<ReturnType<typeof loadFor>>
  let cold: Awaited<ReturnType<typeof loadFor>>
  let image: string
  try {
    const all = await Promise.all(runtimes.map((r) => r.runPromise(Runtime)))
    image = (await docker.getContainer(`effect-sandbox-${all[0]!.info.id}`).inspect()).Config.Image
    const loops = all.map((rt, i) => () =>
      runtimes[i]!.runPromise(rt.runCommand(new CmdRunAction({ command: "echo hi", blocking: true })))
    )
    await Promise.all(loops.map((send) => send()))
    cold = await loadFor(loops)
    await warmUp(loops)
    ours = await loadFor(loops)
  } finally {
    await Promise.all(runtimes.map((r) => r.dispose()))
  }

  const servers = await Promise.all(Array.from({ length: SANDBOXES }, () => bareServer(image)))
  const agent = new Agent({ keepAlive: true })
  let bare: Awaited<ReturnType<typeof loadFor>>
  try {
    const loops = servers.map(({ url }) => async () => {
      // The server may still be starting: a refused connection is retried.
      while (true) {
        try {
          return await post(url, agent)
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
      }
    })
    await Promise.all(loops.map((send) => send()))
    await warmUp(loops)
    bare = await loadFor(loops)
  } finally {
    agent.destroy()
    await Promise.all(servers.map((s) => s.remove()))
  }
  record(
    `DockerRuntime: ${SANDBOXES} sandboxes echoing (ms/action, all)`,
    single(1000 / ours.perSecond),
    `${SANDBOXES} bare containers, HTTP echo`,
    single(1000 / bare.perSecond),
    `${ours.perSecond.toFixed(0)} actions/s (goal >= 1000/s; bare ${bare.perSecond.toFixed(0)}/s), ` +
      `each action p50 ${ours.latency.p50.toFixed(1)} ms p95 ${ours.latency.p95.toFixed(1)} ms; ` +
      `the first ${SECONDS} s, cold servers: ${cold.perSecond.toFixed(0)}/s`
  )
}
