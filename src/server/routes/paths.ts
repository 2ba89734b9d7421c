/** Every endpoint of the action server, once: routes register from it, and 405 answers consult it. */
export const ENDPOINTS = {
  alive: ["GET", "/alive"],
  serverInfo: ["GET", "/server_info"],
  vscodeToken: ["GET", "/vscode/connection_token"],
  updateMcpServer: ["POST", "/update_mcp_server"],
  executeAction: ["POST", "/execute_action"],
  executeActionStream: ["POST", "/v1/execute_action/stream"],
  env: ["POST", "/v1/env"],
  mcpTools: ["GET", "/v1/mcp/tools"],
  capabilities: ["GET", "/v1/capabilities"],
  mcpSse: ["GET", "/mcp/sse"],
  mcpMessages: ["POST", "/mcp/messages"],
  listFiles: ["POST", "/list_files"],
  uploadFile: ["POST", "/upload_file"],
  downloadFiles: ["GET", "/download_files"]
} as const satisfies Record<string, readonly ["GET" | "POST", string]>
