import { resolve } from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { parseCommandLine, usageFailure } from './cli/args.ts';
import { DEFAULT_FRESHNESS_MAX_AGE_HOURS, DEFAULT_OPERATION_TIMEOUT_MS } from './api/defaults.ts';
import { operationDeadline } from './api/deadline.ts';
import type { QueryDeps } from './api/query-answer.ts';
import { SourceStateJson, sourceStateOf } from './api/source-state.ts';
import { createMcpServer, DEFAULT_BUDGET_BYTES, localBackend, mcpOptions, mcpScope, remoteBackend, type McpBackend } from './api/mcp/index.ts';
import { SnapshotSource } from './node/index.ts';
import { AnswerCache, DEFAULT_ANSWER_CACHE_BYTES } from './utils/answer-cache.ts';
import { BUILT_IN_CURSOR_SECRET, CursorCodec, OPERATION_REGISTRY, warmSearch } from './operations/index.ts';

const USAGE = `Usage: npm run mcp --silent -- (--base-url URL | --snapshot DIR) [--budget-bytes N]
       npx device-510k-mcp (--base-url URL | --snapshot DIR) [--budget-bytes N]

Serves the Model Context Protocol on stdin and stdout, for desktop clients (docs/mcp.md):

  --base-url URL       ask a running device-510k service (https://host or http://127.0.0.1:8080)
  --snapshot DIR       answer from a snapshot folder (or the link a build publishes) on this disk, with no network
  --budget-bytes N     bytes each of a tool result's JSON and text stays within (${DEFAULT_BUDGET_BYTES}; at least 4096)

Nothing but the protocol is written to stdout; what goes wrong is written to stderr.`;

const log = (message: string, fields: Record<string, unknown> = {}) => process.stderr.write(`${JSON.stringify({ level: 'info', message, ...fields })}\n`);

const values = parseCommandLine('device-510k-mcp', USAGE, {
  'base-url': { type: 'string' },
  snapshot: { type: 'string' },
  'budget-bytes': { type: 'string' },
});
if ((values['base-url'] === undefined) === (values.snapshot === undefined)) usageFailure('device-510k-mcp', new Error('give one of --base-url URL or --snapshot DIR'));
const budget = values['budget-bytes'] === undefined ? DEFAULT_BUDGET_BYTES : Number(values['budget-bytes']);

let sourceToClose = null as SnapshotSource | null;

/** The snapshot folder, opened as `npm start` opens it (and followed when a build publishes a new one). */
async function snapshotBackend(path: string): Promise<McpBackend> {
  const snapshots = new SnapshotSource(resolve(path), {
    pollMs: 60_000,
    watch: true,
    prepare: warmSearch,
    onSwitch: (next) => log('snapshot loaded', { snapshotId: next.id, records: next.manifest.counts.records }),
    onRefuse: (target, err) => log('snapshot refused', { target, reason: err.message }),
  });
  sourceToClose = snapshots;
  await snapshots.start();
  if (!snapshots.current) throw new Error(`no valid snapshot at ${path}: ${snapshots.problem ?? 'it cannot be opened'}`);
  const stateJson = new SourceStateJson();
  const maxAgeHours = DEFAULT_FRESHNESS_MAX_AGE_HOURS;
  const deps: QueryDeps = {
    operations: OPERATION_REGISTRY,
    cursors: new CursorCodec(process.env.CURSOR_SECRET || BUILT_IN_CURSOR_SECRET),
    now: () => new Date(),
    sourceState: (snapshot, now, warnings) => sourceStateOf({ manifest: snapshot?.manifest ?? null, sync: null, now, maxAgeHours, warnings }),
    sourceStateJson: (snapshot, now, warnings) => stateJson.json({ manifest: snapshot?.manifest ?? null, sync: null, now, maxAgeHours, warnings }),
    deadline: operationDeadline(DEFAULT_OPERATION_TIMEOUT_MS, false),
    answerCache: new AnswerCache(DEFAULT_ANSWER_CACHE_BYTES),
  };
  return localBackend({ deps, current: () => snapshots.current });
}

try {
  const backend = values.snapshot !== undefined ? await snapshotBackend(values.snapshot) : remoteBackend(values['base-url'] as string);
  const options = mcpOptions(backend, budget, (tool, err) => log('internal error', { tool, stack: err instanceof Error ? err.stack : String(err) }));
  // One connection: every request runs in its one scope.
  const scope = mcpScope(options);
  const server = createMcpServer(() => scope);
  const transport = new StdioServerTransport();
  transport.onclose = () => sourceToClose?.close();
  await server.connect(transport);
  // The client ending stdin ends the session.
  process.stdin.on('end', () => {
    void server.close();
    sourceToClose?.close();
  });
} catch (err) {
  process.stderr.write(`device-510k-mcp failed: ${err instanceof Error ? err.message : String(err)}\n`);
  sourceToClose?.close();
  process.exitCode = 1;
}
