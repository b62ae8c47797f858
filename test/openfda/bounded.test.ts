import { beforeAll, describe, expect, it } from 'vitest';
import { sourceStateOf } from '../../src/api/source-state.ts';
import type { ClearanceRecord } from '../../src/contract/index.ts';
import { answerOpenFda, type OpenFdaPacing } from '../../src/openfda/answer.ts';
import { Bits } from '../../src/search/docset.ts';
import { parseSearch } from '../../src/openfda/lucene.ts';
import { pageOf, type Order } from '../../src/search/page.ts';
import { OPENFDA_LIMITS as LIMITS, type Budget } from '../../src/search/budget.ts';
import { openFdaBudget } from '../../src/openfda/plan.ts';
import { openSnapshotDirectory } from '../../src/node/index.ts';
import type { Snapshot } from '../../src/snapshot/index.ts';
import { joinBytes } from '../../src/utils/join-bytes.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { allRecords } from '../server/helpers.ts';

/**
 * The openFDA path's bounds: what a request may make the server do is counted (steps of work, turns given back),
 * never timed. Answers are checked against the fixture's records read directly.
 */
const deps = { now: () => new Date('2026-01-02T00:00:00Z'), sourceState: (s: Snapshot | null, now: Date) => sourceStateOf({ manifest: s?.manifest ?? null, sync: null, now, maxAgeHours: 48 }) };

let snapshot: Snapshot;
let records: ClearanceRecord[];
beforeAll(async () => {
  const dir = await buildFixtureSnapshot();
  snapshot = await openSnapshotDirectory(dir);
  records = await allRecords(dir);
});

async function get(query: string, pacing: OpenFdaPacing = {}): Promise<{ status: number; body: any }> {
  const a = await answerOpenFda(deps, snapshot, '510k', new URL(`http://test/device/510k.json?${query}`), pacing);
  return { status: a.status, body: JSON.parse(new TextDecoder().decode(joinBytes(a.chunks))) };
}

/** A pause that counts the turns a request gives back. */
const counting = () => {
  const seen = { turns: 0 };
  return { seen, pause: () => ((seen.turns++), Promise.resolve()) };
};

describe('count= over a field with one value per record', () => {
  it.each(['count=k_number', 'count=k_number.exact', 'search=_exists_:k_number&count=k_number&limit=1', 'search=NOT+k_number:K000001&count=k_number.exact', 'count=k_number&limit=100000000'])(
    '%s is refused with a 400 that says how to list K numbers, before any work',
    async (query) => {
      const { seen, pause } = counting();
      const r = await get(query, { pause, limits: { ...LIMITS, slice: 1 } });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('BAD_REQUEST');
      expect(r.body.error.message).toMatch(/count=k_number is not available: every record has a K number of its own.*search_after/);
      // Refused before the search ran: not one slice of work was done.
      expect(seen.turns).toBe(0);
    },
  );
});

describe('stacked negations', () => {
  it('a run of ! or NOT is folded: an even number is the clause, an odd number its negation', () => {
    const plain = parseSearch('stent');
    expect(parseSearch(`${'!'.repeat(4090)}stent`)).toEqual(plain);
    expect(parseSearch(`${'NOT '.repeat(680)}stent`)).toEqual(plain);
    expect(parseSearch(`${'!'.repeat(4089)}stent`)).toEqual({ type: 'not', child: plain });
    expect(parseSearch(`NOT -!stent`)).toEqual({ type: 'not', child: plain });
    // NOT of a parenthesized NOT folds too.
    expect(parseSearch('NOT (NOT stent)')).toEqual(plain);
  });

  it('a fielded clause folds the same way', () => {
    const plain = parseSearch('device_name:catheter');
    expect(parseSearch(`${'-!'.repeat(2030)}device_name:catheter`)).toEqual(plain);
    expect(parseSearch(`NOT -!device_name:catheter`)).toEqual({ type: 'not', child: plain });
    // NOT of a parenthesized NOT folds too.
    expect(parseSearch('NOT (NOT device_name:catheter)')).toEqual(plain);
  });

  it('a clause marked twice among OR\'ed clauses is required of them, as before the fold (a !!b is a AND b)', async () => {
    expect(parseSearch('device_name:catheter !!product_code:DQY')).toEqual(parseSearch('device_name:catheter AND product_code:DQY'));
    const got = await get(`search=${encodeURIComponent('device_name:catheter !!product_code:DQY')}&limit=1000`);
    const want = records.filter((r) => /\bcatheter\b/i.test(r.deviceName ?? '') && r.productCode === 'DQY').map((r) => r.kNumber).sort();
    expect(want.length).toBeGreaterThan(0);
    expect(got.status).toBe(200);
    expect(got.body.results.map((x: { k_number: string }) => x.k_number).sort()).toEqual(want);
  });

  it('4,089 marks cost the work of one clause', async () => {
    const plainWork = async (search: string) => {
      const budget = { seen: 0 };
      const r = await get(`search=${encodeURIComponent(search)}&limit=5`, { limits: { ...LIMITS, slice: 1 }, pause: () => ((budget.seen++), Promise.resolve()) });
      return { r, turns: budget.seen };
    };
    const plain = await plainWork('NOT stent');
    const stacked = await plainWork(`${'!'.repeat(4089)}stent`);
    expect(stacked.r.body).toEqual(plain.r.body);
    // With a slice of one step, every turn check gives the turn back: the same number of checks means the same work.
    expect(stacked.turns).toBe(plain.turns);
  });
});

describe('work is counted and bounded', () => {
  const prefixes = Array.from({ length: 256 }, (_, i) => `${'abcdefghijklmnop'[i >> 4]}${'abcdefghijklmnop'[i & 15]}*`).join(' ');

  it('256 bare prefixes are refused once their work passes the bound, naming it', async () => {
    const r = await get(`search=${encodeURIComponent(prefixes)}`, { limits: { ...LIMITS, work: 50_000 } });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/needs more than 50,000 steps of work/);
  });

  it('the same search within the bound answers, giving its turn back between slices', async () => {
    const { seen, pause } = counting();
    const r = await get(`search=${encodeURIComponent(prefixes)}`, { pause, limits: { ...LIMITS, slice: 256 } });
    expect(r.status).toBe(200);
    expect(seen.turns).toBeGreaterThan(10);
  });

  it('a count over every record is made in slices, and another request is answered between them', async () => {
    const order: string[] = [];
    let other: Promise<unknown> | null = null;
    const pause = () => {
      // At the count's first turn given back, a request that needs no work is answered before the count goes on.
      other ??= get('search=k_number:' + records[0]!.kNumber).then((r) => order.push(`other ${r.status}`));
      return other.then(() => undefined);
    };
    const r = await get('count=device_name&limit=5', { pause, limits: { ...LIMITS, slice: 64 } });
    order.push(`count ${r.status}`);
    expect(order).toEqual(['other 200', 'count 200']);
    // The words counted, against the records read directly.
    const counts = new Map<string, number>();
    for (const rec of records) for (const w of new Set((rec.deviceName ?? '').normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean))) counts.set(w, (counts.get(w) ?? 0) + 1);
    const top = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 5).map(([term, count]) => ({ term, count }));
    expect(r.body.results).toEqual(top);
  });
});

describe('a sorted page far down (a deep skip)', () => {
  // 20,000 documents with a sort key each (some without one), K numbers a permutation of the ids.
  const N = 20_000;
  let seed = 7;
  const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const key = Int32Array.from({ length: N }, () => (rand() < 0.05 ? -1 : Math.floor(rand() * 300)));
  const kNumber = Uint32Array.from({ length: N }, (_, i) => i);
  for (let i = N - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [kNumber[i], kNumber[j]] = [kNumber[j]!, kNumber[i]!];
  }
  const order = (descending: boolean): Order => ({
    kNumber,
    decided: new Uint32Array(N),
    sort: { key: (d) => key[d]!, descending, keyText: String, keyOf: Number },
  });
  /** The page from a full sort written here: missing last, then the key in its direction, then K number ascending. */
  const naive = (members: number[], descending: boolean, skip: number, limit: number) =>
    [...members]
      .sort((a, b) => {
        const ka = key[a]!;
        const kb = key[b]!;
        if ((ka < 0) !== (kb < 0)) return ka < 0 ? 1 : -1;
        if (ka !== kb) return descending ? kb - ka : ka - kb;
        return kNumber[a]! - kNumber[b]!;
      })
      .slice(skip, skip + limit);

  it.each([
    [false, 17_130, 5],
    [true, 16_000, 1],
    [true, 12_345, 1000],
    [false, 4_096, 3],
  ])('descending=%s skip=%i limit=%i: the page a full sort gives, in bounded work and in slices', async (descending, skip, limit) => {
    const bits = new Bits(N);
    const members: number[] = [];
    for (let d = 0; d < N; d++) if (d % 7 !== 3) (bits.add(d), members.push(d));
    // The work done between two turns given back.
    const gaps: number[] = [];
    let last = 0;
    const budget: Budget = openFdaBudget({ ...LIMITS, slice: 512 }, async () => {
      gaps.push(budget.spent - last);
      last = budget.spent;
    });
    const page = await pageOf(bits, members.length, order(descending), skip, limit, null, budget);
    expect(page).toEqual(naive(members, descending, skip, limit));
    // A selection: a few passes over the keys, not a sort of them (which is n log n comparisons, some 15 a key here).
    expect(budget.spent).toBeLessThan(8 * members.length);
    // In slices: the keys are read a chunk (16,384 documents) at a time, and each pass of the selection is one.
    expect(gaps.length).toBeGreaterThan(3);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(members.length + 512);
  });

  it('a skip past the end is an empty page', async () => {
    const bits = new Bits(N);
    bits.addRange(0, N);
    expect(await pageOf(bits, N, order(false), N, 5, null, openFdaBudget())).toEqual([]);
  });
});
