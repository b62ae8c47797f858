import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { topCounts, topOfDocs } from '../../src/search/facets.ts';

const NONE = 0xffff;

describe('topOfDocs', () => {
  it('picks what topCounts picks from the same counts (ties by id), and leaves the counts zeroed', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.array(fc.integer({ min: 0, max: 45 }), { maxLength: 300 }),
        fc.integer({ min: 1, max: 12 }),
        fc.array(fc.boolean(), { maxLength: 300 }),
        (ids, values, k, picked) => {
          // A column of ids (some past the end stand for "none"), and the documents that match.
          const col = Uint16Array.from(values, (v) => (v >= ids ? NONE : v));
          const docs = Uint32Array.from(col.keys()).filter((d) => picked[d] ?? false);
          const counts = new Uint32Array(ids);
          for (const d of docs) if (col[d] !== NONE) counts[col[d]!]!++;
          const expected = topCounts(counts, k);
          expect(topOfDocs(counts, col, NONE, docs, k)).toEqual(expected);
          expect(counts.every((c) => c === 0)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('reads only the given span of counts', () => {
    const counts = Uint32Array.from([0, 0, 3, 1, 3, 0, 0]);
    expect(topCounts(counts, 2, 2, 5)).toEqual([[2, 3], [4, 3]]);
    expect(topCounts(counts, 10, 3, 4)).toEqual([[3, 1]]);
  });
});
