import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchSummaries, summaryPath, SummaryState } from '../../build/predicates/fetch.ts';
import { PMN_COLUMNS } from '../../build/sources/parse.ts';
import { summaryPdf } from '../helpers/summary-pdf.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

const ROOT = resolve(import.meta.dirname, '../..');

/** A stand-in for FDA's document server: PDFs by path, 404 for the rest, faults and a delay on demand. */
type Origin = { url: string; pdfs: Map<string, Uint8Array>; requests: string[]; fail: Map<string, number>; delayMs: number; close(): Promise<void> };

async function startOrigin(): Promise<Origin> {
  const origin = { pdfs: new Map<string, Uint8Array>(), requests: [] as string[], fail: new Map<string, number>(), delayMs: 0 };
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    origin.requests.push(path);
    const answer = () => {
      const failing = origin.fail.get(path) ?? 0;
      if (failing > 0) {
        origin.fail.set(path, failing - 1);
        res.writeHead(503).end('busy');
        return;
      }
      const pdf = origin.pdfs.get(path);
      if (!pdf) res.writeHead(404).end('not found');
      else res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': pdf.byteLength }).end(pdf);
    };
    if (origin.delayMs > 0) setTimeout(answer, origin.delayMs);
    else answer();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { ...origin, url: `http://127.0.0.1:${port}/`, close: () => new Promise((r) => server.close(() => r())) } as Origin;
}

/** FDA's pipe file with these clearances (number and decision date MM/DD/YYYY), the other columns blank. */
function pmnFile(path: string, rows: [string, string][]): void {
  const blank = PMN_COLUMNS.map(() => '');
  const lines = [PMN_COLUMNS.join('|'), ...rows.map(([k, d]) => blank.map((_, i) => (PMN_COLUMNS[i] === 'KNUMBER' ? k : PMN_COLUMNS[i] === 'DECISIONDATE' ? d : 'x')).join('|'))];
  writeFileSync(path, `${lines.join('\r\n')}\r\n`, 'latin1');
}

const summaryText = (predicate: string, reference: string) =>
  `510(k) Summary\nPredicate Device:\nAcme Glucose Test (${predicate})\nThe method comparison used the reference method Acme Lab Analyzer (${reference}).`;

/** The command in a child process, waited on without blocking this one (the origin answers from here). */
function cli(...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'build/predicates/cli.ts', ...args], { cwd: ROOT });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((r) => child.once('close', (status) => r({ status, stdout, stderr })));
}
const csv = (path: string) => readFileSync(path, 'utf8').trim().split('\n').slice(1);

describe('summaryPath: where FDA keeps a summary', () => {
  it.each([
    ['K231234', 'cdrh_docs/pdf23/K231234.pdf'],
    ['K101234', 'cdrh_docs/pdf10/K101234.pdf'],
    ['K051234', 'cdrh_docs/pdf5/K051234.pdf'],
    ['K021234', 'cdrh_docs/pdf2/K021234.pdf'],
    ['K011234', 'cdrh_docs/pdf/K011234.pdf'],
    ['K981234', 'cdrh_docs/pdf/K981234.pdf'],
    ['DEN150058', 'cdrh_docs/reviews/DEN150058.pdf'],
    ['P010012', null],
  ])('%s → %s', (id, path) => expect(summaryPath(id)).toBe(path));
});

describe('the nightly summaries against a local origin', () => {
  let origin: Origin;
  let dir: string;
  beforeAll(async () => {
    origin = await startOrigin();
    dir = await testTempDir('predicates-fetch-');
    origin.pdfs.set('/cdrh_docs/pdf26/K261001.pdf', await summaryPdf(summaryText('K250001', 'K190001')));
    origin.pdfs.set('/cdrh_docs/pdf26/K261003.pdf', await summaryPdf(summaryText('K250003', 'K190003')));
    origin.pdfs.set('/cdrh_docs/pdf26/K261004.pdf', await summaryPdf(summaryText('K250004', 'K190004')));
    origin.fail.set('/cdrh_docs/pdf26/K261003.pdf', 1);
  });
  afterAll(async () => {
    await origin.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('fetches each new clearance once, keeps it, records a missing one, and a second night fetches nothing twice', { timeout: 180_000 }, async () => {
    const sync = join(dir, 'night');
    const sources = join(dir, 'pmn.txt');
    // An old clearance (outside --days) and three recent ones: K261002 has no summary at FDA, K261003 fails once.
    pmnFile(sources, [['K001001', '01/05/2000'], ['K261001', '07/01/2026'], ['K261002', '07/02/2026'], ['K261003', '07/03/2026']]);
    const args = ['sync', '--dir', sync, '--source', sources, '--base-url', origin.url, '--rate', '1000', '--retries', '0', '--quiet'];
    const first = await cli(...args);
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/3 clearances, 1 fetched, 1 missing at FDA, 1 failed/);
    expect([...origin.requests].sort()).toEqual(['/cdrh_docs/pdf26/K261001.pdf', '/cdrh_docs/pdf26/K261002.pdf', '/cdrh_docs/pdf26/K261003.pdf']);
    const edges = join(sync, 'predicates/summary');
    expect(csv(join(edges, 'predicates.csv'))).toEqual(['K261001,K250001']);
    expect(JSON.parse(readFileSync(join(edges, 'source.json'), 'utf8'))).toEqual({ source: 'summary', kind: 'predicate', report: 'report.csv' });
    const report = csv(join(edges, 'report.csv'));
    expect(report[0]).toMatch(/^K261001,read,K250001,/);
    expect(report[1]).toMatch(/^K261002,missing,,FDA has no summary at .*K261002\.pdf \(HTTP 404\)$/);
    expect(report[2]).toMatch(/^K261003,missing,,not downloaded after 1 attempt\(s\): .*HTTP 503/);
    // What was fetched is kept byte for byte.
    expect(readFileSync(join(sync, 'summaries/pdf/K261001.pdf'))).toEqual(Buffer.from(origin.pdfs.get('/cdrh_docs/pdf26/K261001.pdf') as Uint8Array));

    // The next night: a new clearance. Only it and the one that failed are asked for.
    origin.requests.length = 0;
    pmnFile(sources, [['K001001', '01/05/2000'], ['K261001', '07/01/2026'], ['K261002', '07/02/2026'], ['K261003', '07/03/2026'], ['K261004', '07/04/2026']]);
    const second = await cli(...args);
    expect(second.status, second.stderr).toBe(0);
    expect([...origin.requests].sort()).toEqual(['/cdrh_docs/pdf26/K261003.pdf', '/cdrh_docs/pdf26/K261004.pdf']);
    expect(csv(join(edges, 'predicates.csv'))).toEqual(['K261001,K250001', 'K261003,K250003', 'K261004,K250004']);

    // A third night with nothing new asks for nothing.
    origin.requests.length = 0;
    expect((await cli(...args)).status).toBe(0);
    expect(origin.requests).toEqual([]);
  });

  it('bounds a download by its size and keeps nothing of it', async () => {
    const sync = join(dir, 'bounded');
    origin.requests.length = 0;
    const run = await fetchSummaries({ dir: sync, devices: ['K261004'], baseUrl: origin.url, intervalMs: 0, retries: 0, maxBytes: 100 });
    expect(run).toMatchObject({ fetched: 0, failed: 1 });
    const state = SummaryState.parse(JSON.parse(readFileSync(join(sync, 'summaries/state.json'), 'utf8')));
    expect(state.devices.K261004).toMatchObject({ status: 'failed', attempts: 1 });
    expect(state.devices.K261004?.reason).toMatch(/--max-summary-bytes/);
    expect(existsSync(join(sync, 'summaries/pdf/K261004.pdf'))).toBe(false);
    expect(existsSync(join(sync, 'summaries/pdf/K261004.pdf.part'))).toBe(false);
    // Left after its attempts: a third run does not ask again.
    await fetchSummaries({ dir: sync, devices: ['K261004'], baseUrl: origin.url, intervalMs: 0, retries: 0, maxBytes: 100, maxAttempts: 2 });
    origin.requests.length = 0;
    await fetchSummaries({ dir: sync, devices: ['K261004'], baseUrl: origin.url, intervalMs: 0, retries: 0, maxBytes: 100, maxAttempts: 2 });
    expect(origin.requests).toEqual([]);
  });

  it('backfill resumes after being killed: every summary fetched once, at most the one in flight twice', { timeout: 180_000 }, async () => {
    const sync = join(dir, 'backfill');
    const sources = join(dir, 'pmn-old.txt');
    const ids = Array.from({ length: 8 }, (_, i) => `K1500${String(i + 10)}`);
    for (const id of ids) origin.pdfs.set(`/cdrh_docs/pdf15/${id}.pdf`, await summaryPdf(summaryText(`K14${id.slice(3)}`, 'K990001')));
    pmnFile(sources, ids.map((id, i) => [id, `03/${String(i + 10)}/2015`]));
    origin.requests.length = 0;
    origin.delayMs = 100;
    const args = ['backfill', '--dir', sync, '--source', sources, '--base-url', origin.url, '--rate', '20', '--retries', '0', '--quiet'];
    const child = spawn(process.execPath, ['--import', 'tsx', 'build/predicates/cli.ts', ...args], { cwd: ROOT, stdio: 'ignore' });
    const stateFile = join(sync, 'summaries/state.json');
    const kept = () => (existsSync(stateFile) ? Object.keys(SummaryState.parse(JSON.parse(readFileSync(stateFile, 'utf8'))).devices).length : 0);
    const deadline = Date.now() + 60_000;
    while (kept() < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const before = kept();
    expect(before).toBeGreaterThanOrEqual(3);
    expect(before).toBeLessThan(ids.length);

    origin.delayMs = 0;
    const again = await cli(...args);
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`${ids.length - before} fetched`));
    const counts = new Map<string, number>();
    for (const p of origin.requests) counts.set(p, (counts.get(p) ?? 0) + 1);
    expect([...counts.keys()].sort()).toEqual(ids.map((id) => `/cdrh_docs/pdf15/${id}.pdf`));
    expect([...counts.values()].filter((n) => n > 1).length).toBeLessThanOrEqual(1);
    expect(csv(join(sync, 'predicates/summary/predicates.csv'))).toEqual(ids.map((id) => `${id},K14${id.slice(3)}`));
  });
});
