import { cp, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnswerCache } from '../../src/utils/answer-cache.ts';
import { OPERATION_REGISTRY, SearchUnavailable, type Operation } from '../../src/operations/index.ts';
import { openSnapshotDirectory } from '../../src/node/index.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { ask, expectError, expectOk, startServer, VALID_INPUT, type Answer, type Running } from './helpers.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

const search = (input: Record<string, unknown>) => ({ ...VALID_INPUT['device-510k.search'], ...input });

/**
 * Search answers are kept as bytes per snapshot (src/utils/answer-cache.ts): the same search asked again is answered
 * without running the engine, with the same bytes apart from `servedAt`, and never across snapshots.
 */
let snapshotPath: string;
const servers: Running[] = [];

beforeAll(async () => {
  snapshotPath = await buildFixtureSnapshot();
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

/** The search operation, counting how often its handler runs. */
function countingSearch(fails: boolean): { op: Operation; runs: () => number } {
  const real = OPERATION_REGISTRY['device-510k.search'];
  let runs = 0;
  const op: Operation = {
    ...real,
    handler: (input, ctx) => {
      runs++;
      if (fails) throw new SearchUnavailable();
      return real.handler(input, ctx);
    },
  };
  return { op, runs: () => runs };
}

const withoutServedAt = (answer: Answer): string => answer.text.replace(/"servedAt":"[^"]*"/, '"servedAt":""');

async function serve(answerCacheBytes?: number, fails = false) {
  const counting = countingSearch(fails);
  const server = await startServer({ snapshotPath, operations: { 'device-510k.search': counting.op }, ...(answerCacheBytes === undefined ? {} : { answerCacheBytes }) });
  servers.push(server);
  return { server, runs: counting.runs };
}

describe('the search answer cache', () => {
  it('answers a repeated search without running it again, with the same bytes apart from servedAt', async () => {
    const { server, runs } = await serve();
    const first = await ask(server.url, 'device-510k.search', search({ query: 'catheter', pageSize: 5 }));
    expectOk(first, 'device-510k.search');
    const again = await ask(server.url, 'device-510k.search', search({ query: 'catheter', pageSize: 5 }));
    expect(runs()).toBe(1);
    expect(withoutServedAt(again)).toBe(withoutServedAt(first));
    // The same request with its members in another order is the same entry.
    const { query: _q, ...rest } = search({ pageSize: 5 });
    const reordered = await ask(server.url, 'device-510k.search', { ...rest, query: 'catheter' });
    expect(runs()).toBe(1);
    expect(withoutServedAt(reordered)).toBe(withoutServedAt(first));
    // Another page is another answer.
    const second = await ask(server.url, 'device-510k.search', search({ query: 'catheter', pageSize: 5, page: 2 }));
    expectOk(second, 'device-510k.search');
    expect(runs()).toBe(2);
    expect(withoutServedAt(second)).not.toBe(withoutServedAt(first));
  });

  it('keeps nothing when its size is 0', async () => {
    const { server, runs } = await serve(0);
    for (let i = 0; i < 3; i++) expectOk(await ask(server.url, 'device-510k.search', search({ query: 'catheter' })), 'device-510k.search');
    expect(runs()).toBe(3);
  });

  it('never keeps an error', async () => {
    const { server, runs } = await serve(undefined, true);
    for (let i = 0; i < 2; i++) expectError(await ask(server.url, 'device-510k.search', search({ query: 'catheter' })), 503, 'source_unavailable', 'device-510k.search');
    expect(runs()).toBe(2);
  });

  it('stays within its size in bytes, and keeps entries per snapshot', async () => {
    const dir = await testTempDir('answer-cache-');
    try {
      // Two Snapshot objects over copies of one snapshot: the same input in each is a separate entry.
      await cp(snapshotPath, join(dir, 'a'), { recursive: true, dereference: true });
      await symlink(join(dir, 'a'), join(dir, 'link'));
      const one = await openSnapshotDirectory(join(dir, 'link'));
      const two = await openSnapshotDirectory(join(dir, 'link'));
      const cache = new AnswerCache(4096);
      const parts = (n: number) => ({ data: new Uint8Array(n), tail: new Uint8Array(2), warnings: undefined });
      cache.set(one, 'k1', parts(1000));
      expect(cache.get(one, 'k1')?.data.length).toBe(1000);
      expect(cache.get(two, 'k1')).toBeUndefined();
      for (let i = 0; i < 20; i++) cache.set(one, `k${i}`, parts(1000));
      expect(cache.weightFor(one)).toBeLessThanOrEqual(4096);
      expect(cache.get(one, 'k19')).toBeDefined();
      expect(cache.get(one, 'k1')).toBeUndefined();
      // An answer larger than the whole cache is not kept.
      cache.set(two, 'big', parts(10_000));
      expect(cache.get(two, 'big')).toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

});
