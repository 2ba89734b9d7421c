/**
 * A stdio MCP server for the interruption group: its tool `hang` starts
 * `sleep <argv[2]>` and answers only when that ends. An honoured cancellation
 * (the SDK's abort signal) kills the sleep; an ignored one leaves it running,
 * which is what the group looks for.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { spawn } from "node:child_process"

const server = new McpServer({ name: "chaos-hang", version: "1.0.0" })
server.registerTool("hang", { description: "Never answers unless cancelled" }, async (extra) => {
  const sleep = spawn("/bin/sleep", [process.argv[2] ?? "600"], { stdio: "ignore" })
  extra.signal.addEventListener("abort", () => sleep.kill("SIGKILL"))
  await new Promise((resolve) => sleep.on("exit", resolve))
  return { content: [{ type: "text", text: "woke up" }] }
})
await server.connect(new StdioServerTransport())
