/**
 * `npm run chaos`: attack the runtimes on this machine (loopback, and containers
 * this run creates) and check the guarantees docs/security.md states. Each group
 * gets a share of the time budget (`--budget <seconds>`, default 600) and reports
 * what it managed; rows are printed as a table, and any failing row makes the
 * exit code 1.
 *
 *   npm run chaos                      # everything, 10 min budget
 *   npm run chaos -- --quick           # small counts, for development
 *   npm run chaos -- fuzz escapes      # only those groups
 *
 * bench/reliability.json is the committed record, and holds every group's rows
 * (record.ts): a run of all groups writes them all; a run of some groups replaces
 * the rows of the groups it ran and keeps the others. A `--quick` run writes
 * nothing: its small counts are not the measurements the targets and
 * docs/security.md speak of, and a quick row in the record, marked or not, would
 * stand in for a full-size row the suite never measured.
 */
import { join } from "node:path"
import { cyclesRows } from "./cycles.ts"
import { egressRows } from "./egress.ts"
import { egressSecretRows } from "./egressSecrets.ts"
import { escapeRows } from "./escapes.ts"
import { fuzzRows } from "./fuzz.ts"
import { hostUserRows } from "./hostUsers.ts"
import { interruptRows } from "./interrupt.ts"
import { kubernetesRows } from "./kubernetes.ts"
import { neighbourRows } from "./neighbours.ts"
import { ownerKillRows } from "./ownerKill.ts"
import { processRows } from "./processes.ts"
import { mergeRecord, readRecord, type RecordRow, writeRecord } from "./record.ts"
import { resourceRows } from "./resources.ts"
import { broken, Budget, type GroupContext, type Row } from "./rows.ts"
import { runtimeApiRows } from "./runtimeApi.ts"
import { secretRows } from "./secrets.ts"

/** The egress group: the policy's rows, then the secrets' (each entry of GROUPS stays on one line). */
const egressGroupRows = async (context: Parameters<typeof egressRows>[0]) => [
  ...(await egressRows(context)),
  ...(await egressSecretRows(context))
]

/** Each group's share of the budget, relative to the groups run (a run of some groups splits the whole budget among them). */
const GROUPS: ReadonlyArray<{
  readonly name: string
  readonly share: number
  readonly run: (context: GroupContext) => Promise<ReadonlyArray<Row>>
}> = [
  { name: "fuzz", share: 0.15, run: fuzzRows },
  { name: "resources", share: 0.08, run: resourceRows },
  { name: "escapes", share: 0.08, run: escapeRows },
  { name: "owner-kill", share: 0.21, run: ownerKillRows },
  { name: "cycles", share: 0.14, run: cyclesRows },
  { name: "interrupt", share: 0.1, run: interruptRows },
  { name: "secrets", share: 0.03, run: secretRows },
  { name: "processes", share: 0.03, run: processRows },
  { name: "kubernetes", share: 0.12, run: kubernetesRows },
  { name: "runtime-api", share: 0.06, run: runtimeApiRows },
  { name: "neighbours", share: 0.03, run: neighbourRows },
  { name: "host-users", share: 0.03, run: hostUserRows },
  { name: "egress", share: 0.03, run: egressGroupRows }
]

const parseArgs = (argv: ReadonlyArray<string>) => {
  let budgetSeconds = 600
  let quick = false
  const only: Array<string> = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === "--quick") quick = true
    else if (arg === "--budget") budgetSeconds = Number(argv[++i])
    else if (arg.startsWith("--budget=")) budgetSeconds = Number(arg.slice("--budget=".length))
    else if (GROUPS.some((g) => g.name === arg)) only.push(arg)
    else throw new Error(`unknown argument "${arg}"; groups: ${GROUPS.map((g) => g.name).join(", ")}`)
  }
  if (!Number.isFinite(budgetSeconds) || budgetSeconds <= 0) throw new Error("--budget takes a number of seconds")
  return { budgetSeconds, quick, only }
}

const printTable = (rows: ReadonlyArray<Row>) => {
  const width = Math.max(...rows.map((r) => r.name.length), 4)
  console.log(`\n${"row".padEnd(width)}  ${"value".padStart(12)}  ${"unit".padEnd(10)}  ${"target".padEnd(26)}  pass`)
  for (const row of rows) {
    console.log(
      `${row.name.padEnd(width)}  ${String(row.value).padStart(12)}  ${row.unit.padEnd(10)}  ${
        row.target.padEnd(26)
      }  ${row.pass ? "ok" : "FAIL"}`
    )
  }
}

const main = async () => {
  const { budgetSeconds, quick, only } = parseArgs(process.argv.slice(2))
  const groups = GROUPS.filter((g) => only.length === 0 || only.includes(g.name))
  const totalShare = groups.reduce((n, g) => n + g.share, 0)
  const recordPath = join(import.meta.dirname, "..", "reliability.json")
  // Read before the groups run: a record that cannot be merged fails now, not after the budget.
  const existing = quick || only.length === 0 ? [] : readRecord(recordPath)
  const started = performance.now()
  const rows: Array<RecordRow> = []
  for (const group of groups) {
    // A group's share, of what is left: time one group did not use goes to the later ones.
    const left = budgetSeconds * 1000 - (performance.now() - started)
    const remainingShare = groups.slice(groups.indexOf(group)).reduce((n, g) => n + g.share, 0)
    const ms = Math.max(5_000, left * group.share / (remainingShare || totalShare))
    console.log(`\n== ${group.name} (${(ms / 1000).toFixed(0)} s${quick ? ", quick" : ""})`)
    const groupStart = performance.now()
    const got = await group.run({ budget: new Budget(ms), quick }).catch((error) => [broken(group.name, error)])
    for (const row of got) console.log(`  ${row.pass ? "ok  " : "FAIL"} ${row.name}: ${row.value} ${row.unit}`)
    console.log(`  (${((performance.now() - groupStart) / 1000).toFixed(1)} s)`)
    rows.push(...got.map((row) => ({ group: group.name, ...row })))
  }
  if (!quick) {
    const names = GROUPS.map((g) => g.name)
    writeRecord(recordPath, mergeRecord(existing, rows, groups.map((g) => g.name), names))
  }
  printTable(rows)
  const failed = rows.filter((r) => !r.pass)
  console.log(
    `\n${rows.length - failed.length}/${rows.length} rows pass in ${
      ((performance.now() - started) / 1000).toFixed(0)
    } s; ${
      quick
        ? "bench/reliability.json left as it was (a quick run is not the record)"
        : only.length === 0
        ? "wrote bench/reliability.json"
        : `replaced the rows of ${only.join(", ")} in bench/reliability.json`
    }`
  )
  process.exit(failed.length === 0 ? 0 : 1)
}

main().catch((error) => {
  console.error(error)
  process.exit(2)
})
