/**
 * A tool offered by one of a runtime's MCP servers, as `Runtime.listTools`
 * returns it and `GET /v1/mcp/tools` sends it: MCP's own `Tool` fields (name,
 * description, inputSchema) plus the server that offers it.
 */
import { Schema } from "effect"
import { JsonObject, withDefault } from "./fields.ts"

export class McpTool extends Schema.Class<McpTool>("McpTool")({
  /** The configured server's `name` (a call goes to the first server listing the tool). */
  server: Schema.String,
  /** What `McpCallAction.name` / `callTool({ name })` takes. */
  name: Schema.String,
  /** Empty when the server gives none. */
  description: withDefault(Schema.String, ""),
  /** The JSON Schema of the tool's `arguments`. */
  inputSchema: JsonObject
}) {}

/** The body of `GET /v1/mcp/tools`. */
export const McpToolList = Schema.Struct({ tools: Schema.Array(McpTool) })
