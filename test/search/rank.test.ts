import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rankedPage as pageOf } from '../../src/search/page.ts';

describe('pageOf', () => {
  it('is the page of a full sort by score descending, then id ascending, for small and large scores', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 300 })), { maxLength: 200 }),
        fc.integer({ min: 0, max: 220 }),
        fc.integer({ min: 0, max: 60 }),
        (points, offset, limit) => {
          const docs = Uint32Array.from(points.keys(), (i) => i * 3 + 1);
          const scores = Uint32Array.from(points);
          const order = [...docs.keys()].sort((a, b) => points[b]! - points[a]! || a - b).map((i) => docs[i]!);
          expect(Array.from(pageOf(docs, scores, offset, limit))).toEqual(order.slice(offset, offset + limit));
          expect(Array.from(pageOf(docs, null, offset, limit))).toEqual(Array.from(docs).slice(offset, offset + limit));
        },
      ),
      { numRuns: 500 },
    );
  });
});
