/**
 * Interrupting an action over HTTP (LocalRuntime) stops what it started, for
 * every action type: the client's interruption aborts the request, the server
 * interrupts its handler, and the tool stops (see test/conformance/interruption.ts).
 */
import { LocalRuntime } from "../../src/local.ts"
import { describeInterruption, slowMcpServer } from "../conformance/interruption.ts"

describeInterruption("interrupting an action over HTTP (LocalRuntime)", (tools) =>
  LocalRuntime.layer({
    ipython: tools.ipython && { agentSkills: false },
    browser: tools.browser,
    mcp: { stdio: [slowMcpServer] }
  }))
