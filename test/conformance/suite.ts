/**
 * The conformance suite: one set of behaviours, run against every runtime layer.
 * A runtime is conformant when this passes for it; each runtime's test file
 * calls `runConformance` with its layer.
 */
import { describe } from "@effect/vitest"
import { browserConformance } from "./browser.ts"
import { envAndTransferConformance } from "./envAndTransfer.ts"
import { filesConformance } from "./files.ts"
import { ipythonConformance } from "./ipython.ts"
import { lifecycleConformance } from "./lifecycle.ts"
import { mcpConformance } from "./mcp.ts"
import { processesConformance } from "./processes.ts"
import { shellConformance } from "./shell.ts"
import { snapshotConformance } from "./snapshot.ts"
import { streamConformance } from "./stream.ts"
import type { ConformanceTarget } from "./target.ts"

export type { ConformanceTarget } from "./target.ts"

/** The target of the cases that use no tool: its toolless variant when it has one. */
const withoutTools = (target: ConformanceTarget): ConformanceTarget =>
  target.toolless === undefined ? target : { ...target, ...target.toolless }

export const runConformance = (target: ConformanceTarget) =>
  describe(`conformance: ${target.name}`, () => {
    const bare = withoutTools(target)
    shellConformance(bare)
    streamConformance(target)
    filesConformance(bare)
    envAndTransferConformance(bare)
    lifecycleConformance(target)
    snapshotConformance(bare)
    ipythonConformance(target)
    mcpConformance(target)
    browserConformance(target)
    processesConformance(bare)
  })
