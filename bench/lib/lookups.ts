import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  LAYOUT,
  Manifest,
  ShardIndex,
  TopProductCodesFile,
  productCodeShardId,
  productCodeShardPath,
} from '../../src/contract/index.ts';
import { CursorCodec } from '../../src/operations/index.ts';
import type { LoadRequest } from './load.ts';
import { BENCH_CURSOR_SECRET } from './server.ts';

/**
 * The lookups measured side by side: each operation through POST /v1/query, and the precomputed file nginx serves
 * for the same answer. Requests cover the whole snapshot (every record shard, every product code with clearances,
 * up to `sample` of each), so the figures are those of uniform traffic over all the data, not of a few hot files.
 */
export type LookupOperation = 'detail' | 'classification' | 'meta' | 'catalog';
export type LookupTarget = { name: string; operation: LookupOperation; ours: LoadRequest[]; nginx: LoadRequest[]; file: string };

/** A hot set of detail requests: 2,000 records of 1,000 shards, whose bytes fit the server's default cache. */
export const HOT_SHARDS = 1000;

export const LOOKUP_OPERATIONS: readonly LookupOperation[] = ['detail', 'classification', 'meta', 'catalog'];

const query = (operation: string, input: unknown): LoadRequest => ({
  method: 'POST',
  path: '/v1/query',
  body: JSON.stringify({ version: 1, operation: `device-510k.${operation}`, input }),
});
const get = (path: string): LoadRequest => ({ method: 'GET', path: `/${path}` });

/** About `n` items of `xs`, evenly spaced, in order. */
function spread<T>(xs: readonly T[], n: number): T[] {
  if (xs.length <= n) return [...xs];
  return Array.from({ length: n }, (_, i) => xs[Math.floor((i * xs.length) / n)]!);
}

async function json(dir: string, path: string): Promise<unknown> {
  return JSON.parse(await readFile(join(dir, path), 'utf8'));
}

export async function lookupTargets(dir: string, sample: number): Promise<LookupTarget[]> {
  const manifest = Manifest.parse(await json(dir, LAYOUT.manifest));
  const records = ShardIndex.parse(await json(dir, LAYOUT.recordIndex));
  const top = TopProductCodesFile.parse(await json(dir, LAYOUT.topProductCodes));

  // detail: the first and the last K number of each shard; nginx serves that shard. Twice: over every shard (uniform
  // traffic over all the data), and over a hot set of shards that fits the server's shard cache (skewed traffic).
  const detailOver = (name: string, shards: ShardIndex['shards']): LookupTarget => {
    const target: LookupTarget = { name, operation: 'detail', ours: [], nginx: [], file: 'records/K….json (the record\'s shard)' };
    for (const shard of shards) {
      for (const k of new Set([shard.first, shard.last])) {
        target.ours.push(query('detail', { id: k }));
        target.nginx.push(get(shard.path));
      }
    }
    return target;
  };
  const detail = detailOver('detail', spread(records.shards, Math.ceil(sample / 2)));
  const hot = detailOver('detail, hot', spread(records.shards, HOT_SHARDS));

  // classification: product codes that have clearances (what people look up); nginx serves the code's letter shard.
  const classification: LookupTarget = { name: 'classification', operation: 'classification', ours: [], nginx: [], file: 'product-codes/A.json (the code\'s letter shard)' };
  for (const { code } of spread(top.codes, sample)) {
    classification.ours.push(query('classification', { productCode: code }));
    classification.nginx.push(get(productCodeShardPath(productCodeShardId(code))));
  }

  const meta: LookupTarget = { name: 'meta', operation: 'meta', ours: [query('meta', {})], nginx: [get(LAYOUT.meta)], file: 'meta.json' };

  // catalog: a page that is exactly one shard (the cursor names the previous shard's last key, the limit is the
  // shard's count), so both sides send the same records; nginx serves that shard.
  const codec = new CursorCodec(BENCH_CURSOR_SECRET);
  const catalog: LookupTarget = { name: 'catalog', operation: 'catalog', ours: [], nginx: [], file: 'records/K….json (the page\'s shard)' };
  const positions = spread(records.shards.map((_, i) => i), sample);
  for (const i of positions) {
    const shard = records.shards[i]!;
    const previous = records.shards[i - 1];
    const cursor = previous ? codec.encode({ v: 1, k: 'clearance', a: previous.last, s: manifest.snapshotId }) : null;
    catalog.ours.push(query('catalog', { kind: 'clearance', limit: shard.count, cursor }));
    catalog.nginx.push(get(shard.path));
  }
  return [detail, hot, classification, meta, catalog];
}

/** Sends a few of a target's requests once and checks they answer 200 with what they should: a round of 404s would measure nothing. */
export async function checkTarget(url: string, requests: readonly LoadRequest[], what: string): Promise<void> {
  for (const r of spread(requests, 5)) {
    const res = await fetch(`${url}${r.path}`, {
      method: r.method,
      ...(r.body === undefined ? {} : { body: r.body, headers: { 'content-type': 'application/json' } }),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${what}: ${r.method} ${r.path} ${r.body ?? ''} answered ${res.status}: ${text.slice(0, 300)}`);
    const body = JSON.parse(text) as { sourceState?: { warnings?: string[] } };
    if (body.sourceState?.warnings?.length) throw new Error(`${what}: an answer carries warnings: ${body.sourceState.warnings.join(' ')}`);
  }
}
