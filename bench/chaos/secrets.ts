/**
 * Group 7, secrets: a `Redacted` variable printed so that it straddles the
 * 30,000-character truncation cut (at each offset across the head's end and the
 * tail's start), and printed in two writes so that it straddles two streamed
 * chunks (`runStream`, over HTTP: at each split point). No piece of it (8
 * characters or more) may be visible, in an observation or in any one chunk.
 * Then the server exporting its telemetry (telemetry.ts): no secret in what it sends. Then a clone token
 * given to the workspace set-up (cloneToken.ts), and that token in no process's argv during a clone (cloneArgv.ts).
 * Last, an added secret absent from a Docker sandbox's writable layer (secretsOnDisk.ts).
 */
import { ManagedRuntime, Redacted, Stream } from "effect"
import { randomBytes } from "node:crypto"
import { CliRuntime, CmdRunAction, MAX_CMD_OUTPUT_SIZE, Runtime } from "../../src/index.ts"
import { LocalRuntime } from "../../src/local.ts"
import { cloneArgvRows } from "./cloneArgv.ts"
import { cloneTokenRows } from "./cloneToken.ts"
import { atMost, type GroupContext, type Row } from "./rows.ts"
import { secretsOnDiskRows } from "./secretsOnDisk.ts"
import { telemetryRows } from "./telemetry.ts"

const PIECE = 8

const filler = (n: number) => `head -c ${Math.max(0, n)} /dev/zero | tr '\\0' z`

export const secretRows = async (context: GroupContext): Promise<ReadonlyArray<Row>> => [
  ...(await truncationRows(context)),
  ...(await telemetryRows(context)),
  ...(await cloneTokenRows()),
  ...(await cloneArgvRows()),
  ...(await secretsOnDiskRows())
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
      if (shows(secret, content)) leaks++
    }
  } finally {
    await runtime.dispose()
  }
  return [
    atMost(`secrets: outputs showing a piece of a secret cut by truncation (of ${tried})`, leaks, "outputs", 0),
    await streamedRow(secret, budget)
  ]
}

/** The pieces (8 characters or more) of `secret` that `text` shows. */
const shows = (secret: string, text: string) =>
  Array.from({ length: secret.length - PIECE + 1 }, (_, i) => secret.slice(i, i + PIECE)).some((piece) =>
    text.includes(piece)
  )

/** The secret split at each point into two writes 50 ms apart: no chunk may show a piece of it. */
const streamedRow = async (secret: string, budget: GroupContext["budget"]): Promise<Row> => {
  const runtime = ManagedRuntime.make(LocalRuntime.layer())
  let leaks = 0
  let tried = 0
  try {
    const rt = await runtime.runPromise(Runtime)
    await runtime.runPromise(rt.addEnvVars({ CHAOS_SECRET: Redacted.make(secret) }))
    for (let k = 1; k < secret.length && !budget.over; k++, tried++) {
      const command = `printf %s "x\${CHAOS_SECRET:0:${k}}"; sleep 0.05; echo "\${CHAOS_SECRET:${k}}y"`
      const events = await runtime.runPromise(Stream.runCollect(rt.runStream(new CmdRunAction({ command }))))
      if (events.some((event) => event._tag === "Output" && shows(secret, event.text))) leaks++
    }
  } finally {
    await runtime.dispose()
  }
  return atMost(
    `secrets: streamed chunks showing a piece of a secret split across chunks (of ${tried})`,
    leaks,
    "outputs",
    0
  )
}
