/**
 * MCP rows of `npm run bench`: a tool call's round trip through CliRuntime (in
 * process) and LocalRuntime (over HTTP), beside @modelcontextprotocol/sdk's own
 * `Client.callTool` against the same stdio server (server-everything's `echo`).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { type Layer, ManagedRuntime } from "effect"
import { join } from "node:path"
import { CliRuntime, McpObservation, Runtime } from "../src/index.ts"
import { LocalRuntime } from "../src/local.ts"
import { type Sample, timeRuns } from "./stats.ts"

type Record = (name: string, sample: Sample, baseline: string, base: Sample, note?: string) => void

const RUNS = 500
/** A call is well under a millisecond: enough untimed calls first for both sides to be JIT-compiled. */
const WARMUP = 500

const everything = {
  name: "everything",
  command: process.execPath,
  args: [
    join(import.meta.dirname, "..", "node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
    "stdio"
  ],
  env: {}
}
const ECHO = { name: "echo", arguments: { message: "hi" } }
const EXPECTED = JSON.stringify({ content: [{ type: "text", text: "Echo: hi" }] })

/** A row that timed failures would be meaningless: every call must return the echo. */
const checked = (obs: { readonly content: string }) => {
  if (!(obs instanceof McpObservation) || obs.content !== EXPECTED) {
    throw new Error(`MCP row: unexpected observation ${JSON.stringify(obs)}`)
  }
}

/** `callTool` through a runtime built from `layer`, timed. */
const timeRuntime = async (layer: Layer.Layer<Runtime, unknown>) => {
  const managed = ManagedRuntime.make(layer)
  try {
    const rt = await managed.runPromise(Runtime)
    return await timeRuns(RUNS, WARMUP, async () => checked(await managed.runPromise(rt.callTool(ECHO))))
  } finally {
    await managed.dispose()
  }
}

export const mcpRows = async (record: Record, serverEntry: string) => {
  const client = new Client({ name: "bench", version: "0.0.0" })
  await client.connect(
    new StdioClientTransport({ command: everything.command, args: everything.args, stderr: "ignore" })
  )
  let sdk: Sample
  try {
    sdk = await timeRuns(RUNS, WARMUP, async () => {
      const result = await client.callTool(ECHO)
      if (JSON.stringify(result) !== EXPECTED) throw new Error(`MCP baseline: ${JSON.stringify(result)}`)
    })
  } finally {
    await client.close()
  }

  const cli = await timeRuntime(CliRuntime.layer({ mcp: { stdio: [everything] } }))
  record("MCP: echo tool call (CliRuntime)", cli, "sdk Client.callTool over stdio", sdk)
  const local = await timeRuntime(LocalRuntime.layer({ serverEntry, mcp: { stdio: [everything] } }))
  record("MCP: echo tool call (LocalRuntime, HTTP)", local, "sdk Client.callTool over stdio", sdk)
}
