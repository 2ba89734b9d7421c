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
import { shellConformance } from "./shell.ts"
import { streamConformance } from "./stream.ts"
import type { ConformanceTarget } from "./target.ts"

export type { ConformanceTarget } from "./target.ts"

export const runConformance = (target: ConformanceTarget) =>
  describe(`conformance: ${target.name}`, () => {
    shellConformance(target)
    streamConformance(target)
    filesConformance(target)
    envAndTransferConformance(target)
    lifecycleConformance(target)
    ipythonConformance(target)
    mcpConformance(target)
    browserConformance(target)
  })
