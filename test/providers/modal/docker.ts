/**
 * What the Modal stand-in makes on the Docker engine: every sandbox container carries the label
 * `effect-sandbox.modal-standin=<instance>`, so `close()` (and a test's leftover check) finds all of
 * them and nothing else.
 */
import Docker from "dockerode"

export const docker = new Docker()

export const STANDIN_LABEL = "effect-sandbox.modal-standin"

/** Ids of the containers of `instance` that still exist. */
export const leftovers = async (instance: string): Promise<Array<string>> =>
  (await docker.listContainers({ all: true, filters: JSON.stringify({ label: [`${STANDIN_LABEL}=${instance}`] }) }))
    .map((c) => c.Id)

/** Remove a container whatever its state. */
export const removeContainer = (id: string) => docker.getContainer(id).remove({ force: true, v: true }).catch(() => {})

/** The engine's frames (no TTY): 1 byte kind (2: stderr), 3 padding, 4 length, then the chunk. */
const FRAME_HEADER = 8

/**
 * A running container's output followed as it is printed, stdout and stderr apart (its log's frames
 * demultiplexed); both ended once the log's follow ends (the container stopped).
 */
export const followOutput = async (
  id: string,
  into: {
    readonly stdout: { append: (chunk: Buffer) => void; end: () => void }
    readonly stderr: { append: (chunk: Buffer) => void; end: () => void }
  }
) => {
  const stream = await docker.getContainer(id).logs({ stdout: true, stderr: true, follow: true })
  let pending = Buffer.alloc(0)
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    pending = Buffer.concat([pending, chunk])
    while (pending.length >= FRAME_HEADER && pending.length >= FRAME_HEADER + pending.readUInt32BE(4)) {
      const length = pending.readUInt32BE(4)
      into[pending[0] === 2 ? "stderr" : "stdout"].append(pending.subarray(FRAME_HEADER, FRAME_HEADER + length))
      pending = pending.subarray(FRAME_HEADER + length)
    }
  }
  into.stdout.end()
  into.stderr.end()
}

/** A finished container's output, stdout and stderr apart (its logs, demultiplexed). */
export const containerOutput = async (id: string): Promise<{ readonly stdout: string; readonly stderr: string }> => {
  const raw = await docker.getContainer(id).logs({ stdout: true, stderr: true, follow: false })
  const streams: Record<"stdout" | "stderr", Array<Buffer>> = { stdout: [], stderr: [] }
  for (let at = 0; at + FRAME_HEADER <= raw.length; at += FRAME_HEADER + raw.readUInt32BE(at + 4)) {
    streams[raw[at] === 2 ? "stderr" : "stdout"].push(
      raw.subarray(at + FRAME_HEADER, at + FRAME_HEADER + raw.readUInt32BE(at + 4))
    )
  }
  return {
    stdout: Buffer.concat(streams.stdout).toString("utf8"),
    stderr: Buffer.concat(streams.stderr).toString("utf8")
  }
}
