// The Model Context Protocol over the service's operations, the same on every host: tools, resources, the stateless
// Streamable HTTP answer, and where answers come from (this process's snapshot, or a service's base URL).
export { localBackend, remoteBackend, type Answer, type LocalBackendOptions, type McpBackend } from './backend.ts';
export { checkBudget, DEFAULT_BUDGET_BYTES, MIN_BUDGET_BYTES } from './budget.ts';
export { answerMcpPost, jsonRpcError, keptAnswer, readMcpPost, type McpPost, MAX_BATCH, MCP_REQUEST_HEADERS, tooLarge, type McpAnswer } from './http.ts';
export { RESOURCES } from './resources.ts';
export { createMcpServer, mcpOptions, mcpScope, SERVER_NAME, SERVER_VERSION, type McpOptions, type McpScope } from './server.ts';
export { TOOLS, type Tool, type ToolContext } from './tools.ts';
