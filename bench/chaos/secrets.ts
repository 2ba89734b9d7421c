/**
 * Group 7, secrets: a `Redacted` variable printed so that it straddles the
 * 30,000-character truncation cut (at each offset across the head's end and the
 * tail's start). No piece of it (8 characters or more) may be visible. Then the server
 * exporting its telemetry (telemetry.ts): no secret in what it sends.
 */
import { ManagedRuntime, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { CliRuntime, MAX_CMD_OUTPUT_SIZE, Runtime } from "../../src/index.ts"
import { atMost, type GroupContext, type Row } from "./rows.ts"
import { telemetryRows } from "./telemetry.ts"

const PIECE = 8

const filler = (n: number) => `head -c ${Math.max(0, n)} /dev/zero | tr '\\0' z`

export const secretRows = async (context: GroupContext): Promise<ReadonlyArray<Row>> => [
  ...(await truncationRows(context)),
  ...(await telemetryRows(context))
]

const truncationRows = async ({ budget }: GroupContext): Promise<ReadonlyArray<Row>> => {
  const secret = randomBytes(16).toString("hex")
  const half = MAX_CMD_OUTPUT_SIZE / 2
  const runtime = ManagedRuntime.make(CliRuntime.layer())
  let leaks = 0
  let tried = 0
  try {
    const rt = await runtime.runPromise(Runtime)
    await runtime.runPromise(rt.addEnvVars({ CHAOS_SECRET: Redacted.make(secret) }))
    for (let k = -2; k <= secret.length + 2 && !budget.over; k++, tried++) {
      // One copy starts k characters before the head's end, one ends k characters after the tail's start.
      const command = `{ ${filler(half - k)}; printf %s "$CHAOS_SECRET"; ${filler(10_000)}; ` +
        `printf %s "$CHAOS_SECRET"; ${filler(half + k - secret.length)}; }`
      const observation = await runtime.runPromise(rt.runCommand(command))
      const content = String((observation as { content?: unknown }).content ?? "")
      const pieces = Array.from({ length: secret.length - PIECE + 1 }, (_, i) => secret.slice(i, i + PIECE))
      if (pieces.some((piece) => content.includes(piece))) leaks++
    }
  } finally {
    await runtime.dispose()
  }
  return [atMost(`secrets: outputs showing a piece of a secret cut by truncation (of ${tried})`, leaks, "outputs", 0)]
}
