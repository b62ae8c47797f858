import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { startServer, type Running } from '../server/helpers.ts';
import { query, TOOL_NAMES } from './suite.ts';

/**
 * The MCP Inspector's CLI mode (`npx @modelcontextprotocol/inspector --cli …`), a client we did not write, lists and
 * calls the tools over Streamable HTTP and over stdio; its answers are compared with /v1/query's.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const INSPECTOR = join(ROOT, 'node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');
const run = promisify(execFile);

let snapshotPath: string;
let server: Running;

beforeAll(async () => {
  snapshotPath = await buildFixtureSnapshot();
  server = await startServer({ snapshotPath });
}, 120_000);

afterAll(async () => {
  await server?.close();
});

/** The inspector's CLI with these arguments; its stdout parsed as JSON. */
async function inspect(args: string[]): Promise<any> {
  const { stdout } = await run(process.execPath, [INSPECTOR, '--cli', ...args], { cwd: ROOT, timeout: 60_000, env: { ...process.env, MCP_CATALOG_PATH: join(snapshotPath, '..', 'inspector-catalog.json') } });
  return JSON.parse(stdout);
}

const targets = () => [
  { name: 'Streamable HTTP', args: [`${server.url}/mcp`, '--transport', 'http'] },
  { name: 'stdio', args: [process.execPath, join(ROOT, 'bin/device-510k-mcp.js'), '--snapshot', snapshotPath] },
];

describe('the MCP Inspector CLI', () => {
  for (const name of ['Streamable HTTP', 'stdio']) {
    it(`lists the tools over ${name}`, async () => {
      const target = targets().find((t) => t.name === name)!;
      const listed = await inspect([...target.args, '--method', 'tools/list']);
      expect(listed.tools.map((t: any) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
      for (const t of listed.tools) expect(t.annotations.readOnlyHint).toBe(true);
    }, 90_000);

    it(`calls count_by and search_clearances over ${name}, with /v1/query's answers`, async () => {
      const target = targets().find((t) => t.name === name)!;
      const counted = await inspect([...target.args, '--method', 'tools/call', '--tool-name', 'count_by', '--tool-arg', 'field=decisionYear', '--tool-arg', 'query=catheter']);
      const expected = await query(server.url, 'device-510k.search', {
        query: 'catheter', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 1, facets: [{ field: 'decisionYear', size: 25, order: 'count' }],
      });
      expect(counted.isError ?? false).toBe(false);
      expect(counted.structuredContent.total).toBe(expected.json.page.total);
      expect(counted.structuredContent.values).toEqual(expected.json.facets[0].values);

      const found = await inspect([...target.args, '--method', 'tools/call', '--tool-name', 'search_clearances', '--tool-arg', 'query=code:DQY']);
      const search = await query(server.url, 'device-510k.search', { query: 'code:DQY', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10 });
      expect(found.structuredContent.total).toBe(search.json.page.total);
      expect(found.structuredContent.items.map((i: any) => i.kNumber)).toEqual(search.json.data.items.map((i: any) => i.kNumber));
    }, 90_000);
  }
});
