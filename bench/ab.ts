/**
 * A/B of the request path between two checkouts: starts each one's server bundle over the same snapshot and drives
 * the same lookups at both in alternating rounds (wrk), then prints each side's median req/s and the ratio B/A.
 * For a change to the request path, compare it with the code it replaces in one run: this machine's absolute figures
 * move between runs, the ratio of alternating rounds much less.
 *
 *   npx tsx bench/ab.ts --a DIR --b DIR --snapshot DIR [--operations meta,catalog] [--rounds 3] [--seconds 5]
 *                       [--connections 50] [--sample 2000] [--env-a K=V,...] [--env-b K=V,...]
 *
 * A script, not a test: it prints figures and asserts nothing.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseCommandLine } from '../src/cli/args.ts';
import { findGenerator, runLoad, type LoadRequest } from './lib/load.ts';
import { lookupTargets } from './lib/lookups.ts';
import { makeQueries, sampleRecords } from './lib/queries.ts';
import { startServer } from './lib/server.ts';
import { memoryOf } from './lib/procs.ts';
import { median } from './lib/stats.ts';

const USAGE = `Usage: npx tsx bench/ab.ts --a DIR --b DIR --snapshot DIR [options]

  --a DIR, --b DIR     two checkouts of the project (each one's server bundle is built and started)
  --snapshot DIR       the snapshot both serve
  --operations LIST    some of detail, detail-hot, classification, meta, catalog, search, openfda (meta,catalog);
                       search is the bench's 400 queries (give ANSWER_CACHE_BYTES=0 to both sides for each one asked
                       anew); openfda is GET /device/510k.json by K number and by product code, from sampled records
  --rounds N           alternating rounds per operation, the median is kept (3)
  --seconds N          seconds per round (5)
  --connections N      connections of the load generator (50)
  --sample N           distinct lookups per operation, as the bench's --sample (2000)
  --env-a, --env-b     K=V,... added to that side's environment`;

const values = parseCommandLine('ab', USAGE, {
  a: { type: 'string' },
  b: { type: 'string' },
  snapshot: { type: 'string' },
  operations: { type: 'string', default: 'meta,catalog' },
  rounds: { type: 'string', default: '3' },
  seconds: { type: 'string', default: '5' },
  connections: { type: 'string', default: '50' },
  sample: { type: 'string', default: '2000' },
  'env-a': { type: 'string', default: '' },
  'env-b': { type: 'string', default: '' },
});
if (!values.a || !values.b || !values.snapshot) {
  console.error(USAGE);
  process.exit(2);
}
const envOf = (list: string) => Object.fromEntries(list.split(',').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
const tmp = await mkdtemp(join(tmpdir(), 'device-510k-ab-'));


const { generator } = await findGenerator('auto', process.cwd());
const a = await startServer(resolve(values.a), resolve(values.snapshot), await mkdtemp(join(tmp, 'a-')), envOf(values['env-a']));
const b = await startServer(resolve(values.b), resolve(values.snapshot), await mkdtemp(join(tmp, 'b-')), envOf(values['env-b']));
const wanted = values.operations.split(',');
const targets: { name: string; ours: LoadRequest[] }[] = (await lookupTargets(resolve(values.snapshot), Number(values.sample))).filter((t) => wanted.includes(t.name.replace(', hot', '-hot')));
if (wanted.includes('search')) {
  const queries = makeQueries(await sampleRecords(resolve(values.snapshot), 200), 400, 510);
  targets.push({ name: 'search', ours: queries.map((q) => ({ method: 'POST', path: '/v1/query', body: JSON.stringify({ version: 1, operation: 'device-510k.search', input: q.input }) })) });
}
if (wanted.includes('openfda')) {
  const records = (await sampleRecords(resolve(values.snapshot), 200)).slice(0, Number(values.sample));
  const paths = records.flatMap((r) => [
    `/device/510k.json?search=k_number:${r.kNumber}`,
    ...(r.productCode ? [`/device/510k.json?search=product_code:${r.productCode}&limit=5`] : []),
  ]);
  targets.push({ name: 'openfda', ours: paths.map((path) => ({ method: 'GET', path })) });
}
const options = { connections: Number(values.connections), seconds: Number(values.seconds), tmp, tag: 'ab' };
try {
  for (const t of targets) {
    await runLoad(generator, a.url, t.ours, { ...options, seconds: 2 });
    await runLoad(generator, b.url, t.ours, { ...options, seconds: 2 });
    const ra: number[] = [];
    const rb: number[] = [];
    const pa: number[] = [];
    const pb: number[] = [];
    for (let i = 0; i < Number(values.rounds); i++) {
      for (const [side, list, p] of i % 2 === 0 ? ([[a, ra, pa], [b, rb, pb]] as const) : ([[b, rb, pb], [a, ra, pa]] as const)) {
        const r = await runLoad(generator, side.url, t.ours, options);
        if (r.failures > 0) console.log(`  ${t.name}: ${r.failures} failures`);
        list.push(r.rps);
        p.push(r.p99Ms);
      }
    }
    const mib = (pid: number) => `${((memoryOf(pid)?.peak ?? 0) / 1048576).toFixed(0)} MiB peak`;
    console.log(
      `${t.name.padEnd(16)} A ${median(ra).toFixed(0).padStart(6)} req/s p99 ${median(pa).toFixed(1)} ms | B ${median(rb).toFixed(0).padStart(6)} req/s p99 ${median(pb).toFixed(1)} ms | B/A ${(median(rb) / median(ra)).toFixed(2)} | ${mib(a.pid)} / ${mib(b.pid)}`,
    );
  }
} finally {
  await a.stop();
  await b.stop();
}
