import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { LineageData, LineageInput, lineageNumber, type ClearanceRecord } from '../../src/contract/index.ts';
import { openSnapshotDirectory } from '../../src/node/index.ts';
import { ApiError, CursorCodec, LineageFiles, lineage, prepareLineage, walkLineage } from '../../src/operations/index.ts';
import type { Snapshot } from '../../src/snapshot/index.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { modelWalk, readModel, type Model } from '../helpers/lineage-model.ts';
import { allRecords } from '../server/helpers.ts';

/**
 * device-510k.lineage against an independent walk of the fixture's edge files (test/helpers/lineage-model.ts): every
 * device that has an edge, both directions, several depths and kinds; cursor walks; cycles; unknown and edgeless numbers.
 */
const EDGES = fileURLToPath(new URL('../fixtures/fda/predicates', import.meta.url));

let snapshot: Snapshot;
let snapshotPath: string;
let model: Model;
let records: Map<string, ClearanceRecord>;
/** The most-cited device of the fixture, and the one with the longest chain of predicates. */
let cited: string;
let chained: string;
const cursors = new CursorCodec();

beforeAll(async () => {
  const path = await buildFixtureSnapshot();
  snapshotPath = path;
  snapshot = await openSnapshotDirectory(path);
  model = readModel(EDGES);
  records = new Map((await allRecords(path)).map((r) => [r.kNumber, r]));
  const most = (score: (k: string) => number) => [...model.devices].sort().reduce((a, b) => (score(b) > score(a) ? b : a));
  cited = most((k) => model.reverse.get(k)?.length ?? 0);
  chained = most((k) => modelWalk(model, k, 'predicates', null, null).items.at(-1)?.depth ?? 0);
}, 120_000);

type Asked = { id: string; direction: 'predicates' | 'descendants'; depth: number | null; kinds: ('predicate' | 'named')[] | null; limit: number; cursor: string | null };

async function ask(input: Asked) {
  const parsed = LineageInput.parse(input);
  const result = await lineage(prepareLineage(parsed, { cursors }), { snapshot, servedAt: new Date(), cursors });
  const data = LineageData.parse((result.data as { toJSON(): unknown }).toJSON());
  return { data, page: result.page!, warnings: result.warnings ?? [] };
}

/** Every page of a question, following nextCursor; each device once. */
async function walkAll(input: Omit<Asked, 'cursor'>) {
  const items: LineageData['items'] = [];
  let cursor: string | null = null;
  let first: Awaited<ReturnType<typeof ask>> | undefined;
  for (let pages = 0; pages < 10_000; pages++) {
    const answer = await ask({ ...input, cursor });
    first ??= answer;
    expect(answer.page.total).toBe(first.page.total);
    expect(answer.data.byDepth).toEqual(first.data.byDepth);
    items.push(...answer.data.items);
    expect(answer.page.itemsReturned).toBe(answer.data.items.length);
    if (!answer.page.hasNextPage) {
      expect(answer.page.nextCursor).toBeNull();
      break;
    }
    expect(answer.data.items).toHaveLength(input.limit);
    cursor = answer.page.nextCursor;
  }
  return { items, first: first! };
}

function expected(id: string, direction: Asked['direction'], depth: number | null, kinds: Asked['kinds']) {
  const answer = modelWalk(model, id, direction, depth, kinds);
  const byDepth = new Map<number, number>();
  const byYear = new Map<number | null, number>();
  for (const item of answer.items) {
    byDepth.set(item.depth, (byDepth.get(item.depth) ?? 0) + 1);
    const date = records.get(item.kNumber)?.decisionDate ?? null;
    const year = date === null ? null : Number(date.slice(0, 4));
    byYear.set(year, (byYear.get(year) ?? 0) + 1);
  }
  return {
    ...answer,
    byDepth: [...byDepth].sort((a, b) => a[0] - b[0]).map(([depth, count]) => ({ depth, count })),
    byYear: [...byYear].sort((a, b) => (a[0] === null ? 1 : b[0] === null ? -1 : a[0] - b[0])).map(([year, count]) => ({ year, count })),
  };
}

const strip = (items: LineageData['items']) => items.map(({ record: _record, ...rest }) => rest);

describe('device-510k.lineage against an independent walk of the edge files', () => {
  it('every device, both directions, the whole chain and depth 1 and 2: items, via, kinds, totals, counts, cycles', async () => {
    const ids = [...model.devices].sort();
    expect(ids.length).toBeGreaterThan(1000);
    let compared = 0;
    let deep = 0;
    for (const id of ids) {
      for (const direction of ['predicates', 'descendants'] as const) {
        for (const depth of [null, 1, 2]) {
          const want = expected(id, direction, depth, null);
          const got = await ask({ id, direction, depth, kinds: null, limit: 500, cursor: null });
          expect(got.page.total, `${id} ${direction} ${depth}`).toBe(want.items.length);
          expect(strip(got.data.items), `${id} ${direction} ${depth}`).toEqual(want.items.slice(0, 500));
          expect(got.data.byDepth).toEqual(want.byDepth);
          expect(got.data.byYear).toEqual(want.byYear);
          expect(got.data.cycles).toEqual(want.cycles);
          if (want.byDepth.length > 2) deep++;
          compared++;
        }
      }
    }
    expect(compared).toBe(ids.length * 6);
    // The fixture's edges reach beyond two steps, so the whole-chain answers differ from depth 2.
    expect(deep).toBeGreaterThan(10);
  }, 300_000);

  it('walks that overlap, over a cache that evicts shards mid-walk, each give the independent walk', async () => {
    // Every shard read waits a few turns, a different number each time, so the walks' levels interleave; the cache
    // holds about one shard, so the shards a walk uses are evicted by the others while it runs.
    let reads = 0;
    const read = async (path: string) => {
      const bytes = await readFile(join(snapshotPath, path));
      for (let i = (reads++ * 7) % 5; i > 0; i--) await new Promise((r) => setImmediate(r));
      return new Uint8Array(bytes);
    };
    const files = (await LineageFiles.open(read, (path) => snapshot.fileEntry(path) !== undefined, 4096))!;
    const ids = [...model.devices].sort().filter((_, i) => i % 7 === 0);
    const questions = ids.flatMap((id) => (['predicates', 'descendants'] as const).map((direction) => ({ id, direction, depth: null, kinds: null })));
    questions.push({ id: cited, direction: 'descendants', depth: null, kinds: null }, { id: chained, direction: 'predicates', depth: null, kinds: null });
    const walks = await Promise.all(questions.map((q) => walkLineage(files, q)));
    let nonEmpty = 0;
    let withCycles = 0;
    walks.forEach((walk, i) => {
      const q = questions[i]!;
      const want = modelWalk(model, q.id, q.direction, null, null);
      const got = walk.codes.map((code, j) => {
        const origin = files.index.origins[walk.origins[j]!]!;
        return { kNumber: lineageNumber(code), depth: walk.depths[j], via: lineageNumber(walk.vias[j]!), kind: origin.kind, source: origin.source };
      });
      expect(got, `${q.id} ${q.direction}`).toEqual(want.items);
      expect(walk.cycles.map((c) => ({ kNumber: lineageNumber(c.code), via: lineageNumber(c.via) })), `${q.id} ${q.direction}`).toEqual(
        want.cycles.map(({ kNumber, via }) => ({ kNumber, via })),
      );
      if (got.length > 0) nonEmpty++;
      if (want.cycles.length > 0) withCycles++;
    });
    expect(nonEmpty).toBeGreaterThan(100);
    expect(withCycles).toBeGreaterThan(0);
    // More reads than shards: the small cache did evict shards that walks went on to use.
    expect(reads).toBeGreaterThan(files.index.shards.predicates.length + files.index.shards.descendants.length);
  }, 120_000);

  it('a record each item has exactly when the snapshot has the clearance, and it is that record', async () => {
    let withRecord = 0;
    for (const id of ['K875083', 'K142247', cited, chained]) {
      for (const direction of ['predicates', 'descendants'] as const) {
        const got = await ask({ id, direction, depth: null, kinds: null, limit: 500, cursor: null });
        for (const item of got.data.items) {
          expect(item.record).toEqual(records.get(item.kNumber) ?? null);
          if (item.record) withRecord++;
        }
      }
    }
    expect(withRecord).toBeGreaterThan(0);
  });

  it('kinds: only the edges of the kinds asked for are followed', async () => {
    for (const id of ['K875083', 'K880522', 'K142247', 'DEN200002', 'K123170', 'K160610']) {
      for (const direction of ['predicates', 'descendants'] as const) {
        for (const kinds of [['predicate'], ['named'], ['named', 'predicate']] as const) {
          const want = expected(id, direction, null, [...kinds]);
          const got = await ask({ id, direction, depth: null, kinds: [...kinds], limit: 500, cursor: null });
          expect(strip(got.data.items), `${id} ${direction} ${kinds}`).toEqual(want.items);
          expect(got.data.cycles).toEqual(want.cycles);
          for (const item of got.data.items) expect(kinds).toContain(item.kind);
        }
      }
    }
  });

  it("a device whose text a predicate source read keeps only that source's edges", async () => {
    const got = await ask({ id: 'K142247', direction: 'predicates', depth: 1, kinds: null, limit: 500, cursor: null });
    expect(strip(got.data.items)).toEqual([{ kNumber: 'K123170', depth: 1, via: 'K142247', kind: 'predicate', source: 'summary-test' }]);
    // A device the report marks no-text keeps its named edges.
    const named = await ask({ id: 'K160610', direction: 'predicates', depth: 1, kinds: null, limit: 500, cursor: null });
    expect(named.data.items.length).toBeGreaterThan(0);
    expect(new Set(named.data.items.map((i) => i.kind))).toEqual(new Set(['named']));
  });

  it('cycles never loop: each device once, and each cycle reported once', async () => {
    const got = await ask({ id: 'K880522', direction: 'predicates', depth: null, kinds: ['predicate'], limit: 500, cursor: null });
    expect(strip(got.data.items)).toEqual([
      { kNumber: 'K875083', depth: 1, via: 'K880522', kind: 'predicate', source: 'summary-test' },
      { kNumber: 'K882253', depth: 2, via: 'K875083', kind: 'predicate', source: 'summary-test' },
    ]);
    // The self-citation of K875083, and K882253 back to the start.
    expect(got.data.cycles).toEqual([
      { kNumber: 'K875083', via: 'K875083', kind: 'predicate', source: 'summary-test' },
      { kNumber: 'K880522', via: 'K882253', kind: 'predicate', source: 'summary-test' },
    ]);
    const deep = await ask({ id: 'K880522', direction: 'predicates', depth: 50, kinds: ['predicate'], limit: 500, cursor: null });
    expect(deep.data.items).toEqual(got.data.items);
  });

  it('cursor walks visit each device once, in the same order as one page, for several page sizes', async () => {
    const questions = [
      { id: cited, direction: 'descendants' as const, depth: null, kinds: null },
      { id: chained, direction: 'predicates' as const, depth: null, kinds: null },
      { id: 'K875083', direction: 'descendants' as const, depth: null, kinds: null },
      { id: cited, direction: 'descendants' as const, depth: 2, kinds: ['named' as const] },
    ];
    for (const q of questions) {
      const want = expected(q.id, q.direction, q.depth, q.kinds);
      expect(want.items.length).toBeGreaterThan(1);
      for (const limit of [1, 2, 3, 7, 50]) {
        const { items } = await walkAll({ ...q, limit });
        expect(strip(items), `${q.id} ${limit}`).toEqual(want.items);
        expect(new Set(items.map((i) => i.kNumber)).size).toBe(items.length);
      }
    }
  }, 120_000);

  it('a cursor is refused when altered or sent with another question', async () => {
    const first = await ask({ id: cited, direction: 'descendants', depth: null, kinds: null, limit: 2, cursor: null });
    const cursor = first.page.nextCursor!;
    const altered = cursor.slice(0, -3) + (cursor.at(-3) === 'A' ? 'B' : 'A') + cursor.slice(-2);
    await expect(ask({ id: cited, direction: 'descendants', depth: null, kinds: null, limit: 2, cursor: altered })).rejects.toMatchObject({ code: 'invalid_cursor' });
    for (const other of [
      { id: chained, direction: 'descendants' as const, depth: null, kinds: null },
      { id: cited, direction: 'predicates' as const, depth: null, kinds: null },
      { id: cited, direction: 'descendants' as const, depth: 3, kinds: null },
      { id: cited, direction: 'descendants' as const, depth: null, kinds: ['named' as const] },
    ]) {
      await expect(ask({ ...other, limit: 2, cursor })).rejects.toMatchObject({ code: 'invalid_cursor' });
    }
  });

  it('a number with edges and no record answers its edges; a record with no edges an empty list; neither: record_not_found', async () => {
    const noRecord = [...model.devices].find((k) => !records.has(k) && model.reverse.has(k))!;
    const got = await ask({ id: noRecord, direction: 'descendants', depth: 1, kinds: null, limit: 500, cursor: null });
    expect(got.data.items.length).toBeGreaterThan(0);
    const edgeless = [...records.keys()].find((k) => !model.devices.has(k))!;
    for (const direction of ['predicates', 'descendants'] as const) {
      const empty = await ask({ id: edgeless, direction, depth: null, kinds: null, limit: 10, cursor: null });
      expect(empty.data).toEqual({ items: [], byDepth: [], byYear: [], cycles: [] });
      expect(empty.page).toMatchObject({ total: 0, hasNextPage: false, nextCursor: null });
    }
    // A device with edges one way only: the other way is an empty list, not an error.
    const onlyCites = [...model.forward.keys()].find((k) => !model.reverse.has(k))!;
    expect((await ask({ id: onlyCites, direction: 'descendants', depth: null, kinds: null, limit: 10, cursor: null })).page.total).toBe(0);
    const unknown = ['K000001', 'DEN999999'].filter((k) => !records.has(k) && !model.devices.has(k));
    expect(unknown).toHaveLength(2);
    for (const id of unknown) {
      const err = await ask({ id, direction: 'predicates', depth: null, kinds: null, limit: 10, cursor: null }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect(err).toMatchObject({ code: 'record_not_found' });
    }
  });

  it('ids are read case-insensitively with spaces around, and DEN numbers are walked', async () => {
    const a = await ask({ id: ' den200002 ', direction: 'predicates', depth: null, kinds: ['predicate'], limit: 500, cursor: null });
    expect(strip(a.data.items)).toEqual(expected('DEN200002', 'predicates', null, ['predicate']).items);
    expect(a.data.items[0]).toMatchObject({ kNumber: 'K875083', via: 'DEN200002' });
  });
});
