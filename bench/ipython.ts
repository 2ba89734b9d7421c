/**
 * IPython rows of `npm run bench`: a cell's round trip and a kernel's start,
 * beside jupyter_client (Jupyter's own Python client) doing the same in this run.
 */
import { ManagedRuntime } from "effect"
import { spawnSync } from "node:child_process"
import { CliRuntime, IPythonRunCellAction, Runtime } from "../src/index.ts"
import { percentiles, type Sample, skipped, timeRuns } from "./stats.ts"

type Record = (name: string, sample: Sample, baseline: string, base: Sample, note?: string) => void

const PYTHON = "/usr/bin/python3"

/** jupyter_client: start a kernel, then time `runs` cells of "1+1" (milliseconds, as JSON). */
const jupyterClientScript = (runs: number) => `
import json, time
from jupyter_client.manager import start_new_kernel
t = time.perf_counter()
km, kc = start_new_kernel(kernel_name="python3")
start_ms = (time.perf_counter() - t) * 1000
times = []
for i in range(${runs} + 50):
    t = time.perf_counter()
    kc.execute_interactive("1+1", output_hook=lambda m: None, timeout=30)
    if i >= 50: times.append((time.perf_counter() - t) * 1000)
kc.stop_channels(); km.shutdown_kernel(now=True)
print(json.dumps({"start": start_ms, "cells": times}))
`

export const ipythonRows = async (record: Record) => {
  if (spawnSync(PYTHON, ["-c", "import ipykernel, jupyter_client"]).status !== 0) {
    skipped(`IPython rows skipped: ${PYTHON} has no ipykernel`)
    return
  }
  const baseline = JSON.parse(
    spawnSync(PYTHON, ["-c", jupyterClientScript(200)], {
      encoding: "utf8",
      env: { ...process.env, PYDEVD_DISABLE_FILE_VALIDATION: "1" }
    }).stdout
  ) as { start: number; cells: Array<number> }

  const started = performance.now()
  const runtime = ManagedRuntime.make(CliRuntime.layer({ ipython: true }))
  const rt = await runtime.runPromise(Runtime)
  const cell = () => runtime.runPromise(rt.runIPython(new IPythonRunCellAction({ code: "1+1", includeExtra: false })))
  await cell()
  const firstCell = performance.now() - started
  const cells = await timeRuns(200, 50, cell)
  await runtime.dispose()

  record(
    "IPython: cell round trip (CliRuntime)",
    cells,
    "jupyter_client execute_interactive",
    percentiles(baseline.cells),
    "target p50 <= 10 ms"
  )
  record(
    "IPython: runtime start to first cell",
    { p50: firstCell, p95: firstCell },
    "jupyter_client start_new_kernel",
    { p50: baseline.start, p95: baseline.start }
  )
}
