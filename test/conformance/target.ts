/**
 * What the conformance suite needs to know about a runtime under test.
 */
import type { Layer } from "effect"
import type { Runtime, RuntimeCapabilities } from "../../src/index.ts"

export interface ConformanceTarget {
  /** Shown in test names: `cli`, `local`, `docker`, ... */
  readonly name: string
  /** A fresh runtime (its own session) with the given soft timeout; every test builds its own. */
  readonly layer: (options: { readonly noChangeTimeoutSeconds: number }) => Layer.Layer<Runtime, unknown>
  /**
   * What the runtime must report. Asserted, and the tool cases run or skip by it (not by what the
   * runtime reports), so a runtime that lost a tool fails instead of skipping its cases.
   */
  readonly capabilities: RuntimeCapabilities
  /** Every process of a session dies with it whatever it does (a container); else that takes host cgroups. */
  readonly containsProcesses?: boolean
  /**
   * The layer is given a `SandboxConfig` (`sandbox`), so `SANDBOX_*` variables do not reach it: the
   * case that sets them skips (every other target runs it).
   */
  readonly givenSandboxConfig?: boolean
  /**
   * The same runtime without its tools (no kernel, browser or MCP server started), for the cases
   * that use none: shell, files, environment and background processes. Starting a kernel and an MCP
   * server for every one of those cases was most of the suite's CPU on the targets with tools; the
   * lifecycle, stream and tool cases still run on `layer`, so the runtime with every tool started
   * is held to the suite too.
   */
  readonly toolless?: Pick<ConformanceTarget, "layer" | "givenSandboxConfig">
}

/** `describe` title of a tool's cases, saying why they skip when the target lacks the tool. */
export const toolTitle = (target: ConformanceTarget, tool: "ipython" | "browser" | "mcp"): string =>
  target.capabilities[tool] ? tool : `${tool} (skipped: ${target.name} is not configured with it)`
