/**
 * A container's output, line by line, to the Effect logger at debug level
 * (`[<container>] <line>`), for as long as the calling scope lives.
 */
import type Docker from "dockerode"
import { Cause, Effect, Queue, Stream } from "effect"
import { PassThrough } from "node:stream"
import { quotedLines } from "../logLines.ts"

const containerLines = (docker: Docker, container: Docker.Container) =>
  Stream.callback<string>((queue) =>
    Effect.acquireRelease(
      Effect.promise(async () => {
        const raw = await container.logs({ follow: true, stdout: true, stderr: true, since: 0 })
        const text = new PassThrough()
        docker.modem.demuxStream(raw, text, text)
        let partial = ""
        text.setEncoding("utf8").on("data", (chunk: string) => {
          const lines = (partial + chunk).split("\n")
          partial = lines.pop() ?? ""
          for (const line of lines) Queue.offerUnsafe(queue, line)
        })
        raw.on("end", () => Queue.endUnsafe(queue))
        raw.on("error", (error) => Queue.failCauseUnsafe(queue, Cause.die(error)))
        return raw
      }),
      (raw) => Effect.sync(() => (raw as unknown as { destroy?: () => void }).destroy?.())
    )
  )

/** Payloads of Docker's multiplexed log frames (8-byte header: stream, 0, 0, 0, size). */
const demux = (buffer: Buffer): string => {
  const parts: Array<Buffer> = []
  for (let at = 0; at + 8 <= buffer.length;) {
    const size = buffer.readUInt32BE(at + 4)
    parts.push(buffer.subarray(at + 8, at + 8 + size))
    at += 8 + size
  }
  return Buffer.concat(parts).toString("utf8")
}

/** The last `lines` lines a container printed (stdout and stderr), each cut to a readable length. */
export const logTail = (container: Docker.Container, lines = 20) =>
  Effect.promise(() =>
    container.logs({ stdout: true, stderr: true, tail: lines }).then(
      (log) => quotedLines(demux(log)),
      () => ""
    )
  )

/** Someone following the log too: each line, then the log's end (the container stopped, or the stream broke). */
export interface LogWatch {
  readonly line: (line: string) => Effect.Effect<void>
  readonly end: Effect.Effect<void>
}

/** Follow the container's log in the background of the current scope (and show it to `watch`). */
export const forwardContainerLogs = (docker: Docker, container: Docker.Container, name: string, watch?: LogWatch) =>
  containerLines(docker, container).pipe(
    Stream.runForEach((line) =>
      watch === undefined
        ? Effect.logDebug(`[${name}] ${line}`)
        : Effect.andThen(Effect.logDebug(`[${name}] ${line}`), watch.line(line))
    ),
    Effect.ignore,
    Effect.ensuring(watch?.end ?? Effect.void),
    Effect.forkScoped
  )
