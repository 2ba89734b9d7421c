/**
 * Interrupting an action in process (CliRuntime) stops what it started, for
 * every action type: the shell's command, the IPython cell, the browser's
 * navigation, the MCP tool call (see test/conformance/interruption.ts).
 */
import { CliRuntime } from "../../src/index.ts"
import { describeInterruption, slowMcpServer } from "../conformance/interruption.ts"

describeInterruption("interrupting an action in process (CliRuntime)", (tools) =>
  CliRuntime.layer({
    ipython: tools.ipython ? { agentSkills: false } : false,
    browser: tools.browser,
    mcp: { stdio: [slowMcpServer] }
  }))
