/**
 * The change history's size and cost, and GET /v1/feed's throughput: figures printed, nothing asserted.
 *
 *   npx tsx bench/history-feeds.ts [--section history|feed|all] [--records N] [--nights N] [--changes N]
 *                                  [--snapshot PATH] [--seconds S] [--connections N] [--rounds N]
 *
 * history: a year of nightly builds simulated over N records (default 1,000,000, 365 nights, 300 changes a night:
 *   a third added, half changed, a sixth removed). Each night runs the build's own history stage (read the previous
 *   history, drop what left the keep window, append the night's change set, write the files and hash them as the
 *   snapshot writer does) and the static feeds over all N records. Prints the history's bytes and files at the end
 *   and the stage's time a night.
 * feed: the Node server over --snapshot (default: the generated 1,000,000-record bench snapshot, read-only) on a
 *   loopback port; requests /v1/feed for the top product code, the whole data and a word, beside the search of the
 *   same product code (POST /v1/query, a page of 10 and of 50), each for --seconds with --connections at once; then
 *   the product-code feed and the two searches in turn, one second each for --rounds rounds, and their ratio.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCommandLine } from '../src/cli/args.ts';
import { carryHistory, writeHistory, type History } from '../build/history/history.ts';
import { writeStaticFeeds } from '../build/feeds/static.ts';
import type { Comparison } from '../build/changes/changes.ts';
import type { PreviousSnapshot } from '../build/changes/previous.ts';
import type { SnapshotWriter } from '../build/write/writer.ts';
import { LAYOUT, TopProductCodesFile, type ClearanceRecord, type Manifest } from '../src/contract/index.ts';
import { createApp } from '../src/server/app.ts';

const USAGE = `Usage: npx tsx bench/history-feeds.ts [--section history|feed|all] [--records N] [--nights N] [--changes N]
                                   [--snapshot PATH] [--seconds S] [--connections N] [--rounds N]
  --section      what to measure (default all)
  --records      records of the simulated data (default 1000000)
  --nights       nightly builds simulated (default 365)
  --changes      changes a night (default 300)
  --snapshot     the snapshot link the feed section serves (default: the 1M bench snapshot)
  --seconds      seconds per feed request kind (default 5)
  --connections  requests at once (default 8)
  --rounds       rounds of the feed and the search in turn, 1 s each, for their ratio (default 5)`;

const values = parseCommandLine('history-feeds', USAGE, {
  section: { type: 'string' },
  records: { type: 'string' },
  nights: { type: 'string' },
  changes: { type: 'string' },
  snapshot: { type: 'string' },
  seconds: { type: 'string' },
  connections: { type: 'string' },
  rounds: { type: 'string' },
});
const section = values.section ?? 'all';
const RECORDS = Number(values.records ?? 1_000_000);
const NIGHTS = Number(values.nights ?? 365);
const CHANGES = Number(values.changes ?? 300);
const SECONDS = Number(values.seconds ?? 5);
const CONNECTIONS = Number(values.connections ?? 8);
const ROUNDS = Number(values.rounds ?? 5);

const k = (n: number) => `K${String(n).padStart(6, '0')}`;
const PANELS = ['Cardiovascular', 'Radiology', 'Orthopedic', 'General, Plastic Surgery', 'Neurology', 'Clinical Chemistry'];

function record(n: number, applicant = `Applicant ${n % 5000}`): ClearanceRecord {
  const year = 1976 + (n % 50);
  return {
    kNumber: k(n),
    deviceName: `Device ${n}`,
    applicant,
    productCode: `D${String.fromCharCode(65 + (n % 26))}${String.fromCharCode(65 + ((n >> 5) % 26))}`,
    decisionDate: `${year}-0${1 + (n % 9)}-1${n % 10}`,
    decisionDescription: 'Substantially Equivalent',
    advisoryCommittee: PANELS[n % PANELS.length] as string,
    reviewDays: 90 + (n % 200),
  } as unknown as ClearanceRecord;
}

/** The snapshot writer's part the history stage uses: keeps bytes and hashes them, as the writer does. */
function memoryWriter(): { writer: SnapshotWriter; files: Map<string, Uint8Array> } {
  const files = new Map<string, Uint8Array>();
  const writeBytes = (path: string, bytes: Uint8Array) => {
    createHash('sha256').update(bytes).digest('hex');
    files.set(path, bytes);
  };
  const writer = {
    writeJson: (path: string, schema: { parse(v: unknown): unknown }, value: unknown) => writeBytes(path, new TextEncoder().encode(JSON.stringify(schema.parse(value)))),
    writeBytes,
  } as unknown as SnapshotWriter;
  return { writer, files };
}

function previousOf(files: Map<string, Uint8Array>, generatedAt: string): PreviousSnapshot {
  const manifest = { generatedAt, files: [...files.keys()].map((path) => ({ path, bytes: 0, sha256: '' })) } as unknown as Manifest;
  return {
    dir: '',
    manifest,
    changes: null,
    readShard: async () => [],
    readFile: async (path) => {
      const bytes = files.get(path);
      if (!bytes) throw new Error(`no ${path}`);
      return bytes;
    },
  };
}

async function historySection(): Promise<void> {
  const start = Date.UTC(2026, 0, 1, 2);
  // K numbers have six digits: the data starts smaller by the year's additions, so that it ends near RECORDS.
  const startCount = Math.min(RECORDS, 1_000_000 - NIGHTS * Math.round(CHANGES / 3));
  let next = startCount;
  const present: number[] = Array.from({ length: startCount }, (_, i) => i);
  let files = new Map<string, Uint8Array>();
  let previousAt: string | null = null;
  let history: History | null = null;
  const nightMs: number[] = [];
  let rng = 510;
  const rand = (n: number) => {
    rng = (rng * 1103515245 + 12345) % 2 ** 31;
    return rng % n;
  };
  for (let night = 0; night < NIGHTS; night++) {
    const generatedAt = new Date(start + night * 86_400_000).toISOString();
    let comparison: Comparison | null = null;
    if (previousAt !== null) {
      const added = Array.from({ length: Math.round(CHANGES / 3) }, () => {
        present.push(next);
        return k(next++);
      });
      const removed: ClearanceRecord[] = [];
      for (let i = 0; i < Math.round(CHANGES / 6); i++) {
        const at = rand(present.length);
        removed.push(record(present[at] as number));
        present[at] = present[present.length - 1] as number;
        present.pop();
      }
      const changed = Array.from({ length: CHANGES - added.length - removed.length }, () => {
        const n = present[rand(present.length)] as number;
        return { before: record(n), after: record(n, `Renamed ${night}`), fields: ['applicant'] };
      });
      comparison = { previousAt, added, removed, changed };
    }
    const t0 = performance.now();
    history = await carryHistory({ previous: previousAt === null ? null : previousOf(files, previousAt), comparison, records: present as unknown as ClearanceRecord[], generatedAt, keepDays: 400 });
    const { writer, files: written } = memoryWriter();
    writeHistory(history, writer);
    nightMs.push(performance.now() - t0);
    files = written;
    previousAt = generatedAt;
  }
  const total = [...files.values()].reduce((s, b) => s + b.length, 0);
  const sorted = [...nightMs].sort((a, b) => a - b);
  const mb = (n: number) => `${(n / 1e6).toFixed(2)} MB`;
  console.log(`history after ${NIGHTS} nights, ${startCount.toLocaleString('en-US')} records at first and ${present.length.toLocaleString('en-US')} at the end, ${CHANGES} changes a night:`);
  console.log(`  files ${files.size}, ${mb(total)} in all; records.json ${mb(files.get('history/records.json')?.length ?? 0)}, largest month ${mb(Math.max(...[...files].filter(([p]) => p.startsWith('history/changes/')).map(([, b]) => b.length)))}`);
  console.log(`  history stage a night: median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} ms, last ${nightMs.at(-1)!.toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms`);

  const records = Array.from({ length: RECORDS }, (_, i) => record(i));
  const deviceTypes = new Map<string, string | null>();
  const { writer, files: feedFiles } = memoryWriter();
  const t0 = performance.now();
  writeStaticFeeds({ records, history: history as History, deviceTypes, panelCodes: new Map(), generatedAt: new Date().toISOString() }, writer);
  const feedMs = performance.now() - t0;
  console.log(`  static feeds over ${RECORDS.toLocaleString('en-US')} records: ${feedMs.toFixed(0)} ms, ${feedFiles.size} files, ${mb([...feedFiles.values()].reduce((s, b) => s + b.length, 0))}`);
}

async function feedSection(): Promise<void> {
  const snapshotPath = values.snapshot ?? (await findBenchSnapshot());
  const silent = { request: () => {}, info: () => {}, error: () => {} };
  const app = await createApp({ snapshotPath, syncStatePath: null, publicDir: null, pollMs: 0, watch: false, logger: silent });
  const { url } = await app.listen(0, '127.0.0.1');
  try {
    const top = TopProductCodesFile.parse(JSON.parse(await readFile(join(snapshotPath, LAYOUT.topProductCodes), 'utf8')));
    const { code: productCode, count } = top.codes[0]!;
    const code = { productCode, count };
    // The same filter through POST /v1/query: a page of 10 (the page's default) and of 50 (the feed's default entries).
    const search = (pageSize: number) => ({
      name: `search productCode=${code.productCode} (page of ${pageSize})`,
      send: () =>
        fetch(`${url}/v1/query`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ version: 1, operation: 'device-510k.search', input: { query: '', applicant: null, productCode: code.productCode, yearFrom: null, yearTo: null, page: 1, pageSize } }),
        }),
    });
    const kinds: { name: string; send: () => Promise<Response> }[] = [
      { name: `feed productCode=${code.productCode} (${code.count.toLocaleString('en-US')} records)`, send: () => fetch(`${url}/v1/feed?productCode=${code.productCode}`) },
      { name: 'feed, all records', send: () => fetch(`${url}/v1/feed`) },
      { name: 'feed query=catheter', send: () => fetch(`${url}/v1/feed?query=catheter`) },
      { name: 'feed format=json productCode', send: () => fetch(`${url}/v1/feed?format=json&productCode=${code.productCode}`) },
      search(10),
      search(50),
    ];
    console.log(`feed throughput over ${snapshotPath}, ${CONNECTIONS} at once, ${SECONDS} s each:`);
    const run = async (kind: (typeof kinds)[number], seconds: number): Promise<number[]> => {
      const latencies: number[] = [];
      const end = performance.now() + seconds * 1000;
      await Promise.all(
        Array.from({ length: CONNECTIONS }, async () => {
          while (performance.now() < end) {
            const t = performance.now();
            const res = await kind.send();
            await res.arrayBuffer();
            if (res.status !== 200) throw new Error(`${kind.name}: status ${res.status}`);
            latencies.push(performance.now() - t);
          }
        }),
      );
      return latencies;
    };
    for (const kind of kinds) {
      const first = await kind.send();
      if (first.status !== 200) throw new Error(`${kind.name}: status ${first.status}: ${(await first.text()).slice(0, 200)}`);
      await first.arrayBuffer();
    }
    // One second of each before any is measured, so that the first kind measured does not pay for the warm-up alone.
    for (const kind of kinds) await run(kind, 1);
    for (const kind of kinds) {
      const latencies = await run(kind, SECONDS);
      latencies.sort((a, b) => a - b);
      const p = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!.toFixed(1);
      console.log(`  ${kind.name.padEnd(48)} ${(latencies.length / SECONDS).toFixed(0).padStart(6)} req/s  p50 ${p(0.5)} ms  p99 ${p(0.99)} ms`);
    }
    // The product-code feed beside the search of the same filter: one second of each in turn, ROUNDS times, so that
    // both meet the same load from whatever else runs on the machine; the ratio is of the summed counts.
    const pair = [kinds[0]!, search(10), search(50)];
    const done = pair.map(() => 0);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, kind] of pair.entries()) done[i]! += (await run(kind, 1)).length;
    }
    console.log(`  side by side, ${ROUNDS} rounds of 1 s each in turn: ${pair.map((kind, i) => `${kind.name.replace(/ \(\d[\d,]* records\)$/, '')} ${(done[i]! / ROUNDS).toFixed(0)} req/s`).join(', ')}`);
    console.log(`  ratio feed / search: ${(done[0]! / done[1]!).toFixed(2)} (page of 10), ${(done[0]! / done[2]!).toFixed(2)} (page of 50)`);
  } finally {
    await app.close({ graceMs: 1000 });
  }
}

async function findBenchSnapshot(): Promise<string> {
  const { readdir } = await import('node:fs/promises');
  const root = join(tmpdir(), 'device-510k-bench', 'snapshots');
  const dir = (await readdir(root)).find((d) => d.startsWith('1M-'));
  if (!dir) throw new Error(`no 1M snapshot under ${root}; give --snapshot`);
  return join(root, dir, 'snapshot');
}

if (section === 'history' || section === 'all') await historySection();
if (section === 'feed' || section === 'all') await feedSection();
