import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClearanceRecord } from '../../src/contract/index.ts';
import { ADDED, CHANGED, REMOVED, truthOf, twoBuilds } from '../feeds/two-builds.ts';
import { startServer, type Running } from '../server/helpers.ts';
import { call, mcpChecks } from './suite.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * The stdio command (`npm run mcp`, `npx device-510k-mcp`) driven by the official SDK's client: over a snapshot on
 * this disk, and over a running service's base URL, each answer compared with the running service's /v1/query. The
 * snapshot is two builds, so changes_since has real changes to name, checked against a scan of both builds.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin/device-510k-mcp.js');

let work: string;
let out: string;
let before: Map<string, ClearanceRecord>;
let after: Map<string, ClearanceRecord>;
let server: Running;

beforeAll(async () => {
  work = await testTempDir('mcp-stdio-');
  ({ out, before, after } = await twoBuilds(work));
  server = await startServer({ snapshotPath: out });
}, 120_000);

afterAll(async () => {
  await server?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

const overStdio = (command: string, args: string[]) => new StdioClientTransport({ command, args, cwd: ROOT, stderr: 'pipe' });

const sides: { name: string; start: () => StdioClientTransport }[] = [
  { name: 'a local snapshot (node bin/device-510k-mcp.js --snapshot)', start: () => overStdio(process.execPath, [BIN, '--snapshot', out]) },
  // npm's banner goes to stdout, which is the protocol's: --silent keeps it off (docs/mcp.md says so).
  { name: 'a base URL (npm run mcp --silent -- --base-url)', start: () => overStdio('npm', ['run', 'mcp', '--silent', '--', '--base-url', server.url]) },
];

for (const side of sides) {
  describe(`MCP over stdio from ${side.name}`, () => {
    const s = mcpChecks(async () => side.start(), { apiUrl: () => server.url, records: () => [...after.values()] });

    it('names exactly the records the second build added, changed and removed', async () => {
      const truth = truthOf(before, after);
      expect(truth).toEqual({ added: [ADDED], removed: [REMOVED], changed: [{ kNumber: CHANGED, fields: ['applicant'] }] });
      const changes = await call(s.client(), 'changes_since', { since: '2026-01-01' });
      expect(changes.structured.changes.map((c: any) => `${c.kind} ${c.kNumber} ${c.fields.join(',')}`).sort()).toEqual(
        [`added ${ADDED} `, `changed ${CHANGED} applicant`, `removed ${REMOVED} `].sort(),
      );
      expect(changes.text).toContain(`${CHANGED} changed: applicant`);
    });
  });
}

describe('the stdio command refuses a wrong start with one line', () => {
  const run = (args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.stdin.end();
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });

  it('exits 2 without one of --base-url and --snapshot, or with both', async () => {
    const none = await run([]);
    expect(none.code).toBe(2);
    expect(none.stderr.trim()).toBe('device-510k-mcp: give one of --base-url URL or --snapshot DIR (see --help)');
    expect(none.stdout).toBe('');
    const both = await run(['--base-url', 'http://127.0.0.1:1', '--snapshot', out]);
    expect(both.code).toBe(2);
  });

  it('exits 1 naming the folder when there is no snapshot there, and a budget under 4 KiB', async () => {
    const missing = await run(['--snapshot', join(work, 'nothing-here')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`no valid snapshot at ${join(work, 'nothing-here')}`);
    expect(missing.stdout).toBe('');
    const small = await run(['--base-url', 'http://127.0.0.1:1', '--budget-bytes', '100']);
    expect(small.code).toBe(1);
    expect(small.stderr).toContain('Expected `budgetBytes` to be an integer from 4096 and up, got 100');
  });
});
