/**
 * Part of group 3, escapes: a repository's `.openhands/microagents` holding a link to itself
 * (`a -> .`, which made loading recurse for ever), a link out of the repository to a directory
 * with a microagent of its own, and a 40-level chain of directories. Loading must end (within
 * 30 s), read nothing through the links, and skip what is deeper than its cap.
 */
import { Effect, ManagedRuntime } from "effect"
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CliRuntime, loadMicroagents } from "../../src/index.ts"
import { atLeast, atMost, type Row } from "./rows.ts"

const LEVELS = 40

export const microagentLinkRows = async (): Promise<ReadonlyArray<Row>> => {
  const base = mkdtempSync(join(tmpdir(), "chaos-microagents-"))
  const workspace = join(base, "ws")
  const dir = join(workspace, ".openhands", "microagents")
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, "own.md"), "own\n")
  symlinkSync(".", join(dir, "a"))
  mkdirSync(join(base, "outside"))
  writeFileSync(join(base, "outside", "planted.md"), "OUTSIDE\n")
  symlinkSync(join(base, "outside"), join(dir, "out"))
  const deep = join(dir, ...Array.from({ length: LEVELS }, (_, i) => `d${i}`))
  mkdirSync(deep, { recursive: true })
  writeFileSync(join(deep, "deep.md"), "deep\n")
  const runtime = ManagedRuntime.make(CliRuntime.layer({ workspace }))
  try {
    const loaded = await runtime.runPromise(
      loadMicroagents().pipe(Effect.timeoutOption("30 seconds"), Effect.map((o) => o._tag === "Some" ? o.value : null))
    )
    const agents = loaded ?? []
    return [
      atLeast("escapes: microagent loading over a link loop ended within 30 s", loaded === null ? 0 : 1, "loads", 1),
      atLeast(
        "escapes: of it, the repository's own microagent read",
        agents.filter((a) => a.name === "own").length,
        "agents",
        1
      ),
      atMost(
        `escapes: microagents read through a directory link or deeper than the cap (of ${agents.length})`,
        agents.filter((a) => a.content.includes("OUTSIDE") || a.content.includes("deep") || a.name.startsWith("a/"))
          .length,
        "agents",
        0
      )
    ]
  } finally {
    await runtime.dispose()
    rmSync(base, { recursive: true, force: true })
  }
}
