#!/usr/bin/env node
// `npx device-510k-mcp` and `npm run mcp`: the MCP server on stdio (src/mcp-stdio.ts), its TypeScript run through tsx.
import { register } from 'tsx/esm/api';

register();
await import('../src/mcp-stdio.ts');
