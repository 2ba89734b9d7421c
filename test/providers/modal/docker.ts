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

/** A finished container's output, stdout and stderr apart (its logs, demultiplexed). */
export const containerOutput = async (id: string): Promise<{ readonly stdout: string; readonly stderr: string }> => {
  const raw = await docker.getContainer(id).logs({ stdout: true, stderr: true, follow: false })
  const streams: Record<"stdout" | "stderr", Array<Buffer>> = { stdout: [], stderr: [] }
  // Without a TTY the engine frames each chunk with its stream: 1 byte kind (2: stderr), 3 padding, 4 length.
  for (let at = 0; at + 8 <= raw.length; at += 8 + raw.readUInt32BE(at + 4)) {
    streams[raw[at] === 2 ? "stderr" : "stdout"].push(raw.subarray(at + 8, at + 8 + raw.readUInt32BE(at + 4)))
  }
  return {
    stdout: Buffer.concat(streams.stdout).toString("utf8"),
    stderr: Buffer.concat(streams.stderr).toString("utf8")
  }
}
