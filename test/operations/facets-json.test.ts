import { describe, expect, it } from 'vitest';
import { answerParts } from '../../src/api/query-answer.ts';
import { facetsJson } from '../../src/operations/facets-json.ts';
import { JsonBytes } from '../../src/operations/types.ts';
import { mulberry32 as random } from '../helpers/random.ts';

const decoder = new TextDecoder();

// Names with what JSON must escape or encode: quotes, backslashes, control characters, non-ASCII, a lone surrogate.
const ODD = ['ACME "MEDICAL"', 'BACK\\SLASH', 'TAB\tAND\nLINE', 'ÖSTERREICH GMBH', '医疗器械', 'EMOJI 🩺', 'LONE \ud800', ''];

function facet(field: string, n: number, next: () => number) {
  return {
    field,
    values: Array.from({ length: n }, (_, i) => {
      const value = field === 'decisionYear' ? 1976 + i : field === 'thirdParty' ? i % 2 === 0 : `${ODD[i % ODD.length]} ${i}`;
      const count = Math.floor(next() * 100_000);
      return next() < 0.3 ? { value, count, label: ODD[(i * 7) % ODD.length]! } : { value, count };
    }),
  };
}

describe('facets written as JSON a piece at a time', () => {
  it('are the bytes JSON.stringify gives, for any number of values around the piece size, with a pause after each piece', async () => {
    const next = random(7);
    for (const sizes of [[0], [1], [999], [1000], [1001], [2500, 0, 3], [10_070, 3216, 51, 2]]) {
      const facets = sizes.map((n, i) => facet(['applicant', 'productCode', 'decisionYear', 'thirdParty'][i % 4]!, n, next));
      let pauses = 0;
      const bytes = await facetsJson(facets, async () => {
        pauses++;
      });
      expect(decoder.decode(bytes.bytes)).toBe(JSON.stringify(facets));
      expect(pauses).toBe(sizes.reduce((p, n) => p + Math.ceil(n / 1000), 0));
    }
  });

  it('writes a facet whose values are not its last member whole, as JSON.stringify does', async () => {
    const facets = [{ values: [{ value: 'A', count: 1 }], field: 'applicant' }, { field: 'state', values: [] as { value: string; count: number }[] }];
    const bytes = await facetsJson(facets, async () => {});
    expect(decoder.decode(bytes.bytes)).toBe(JSON.stringify(facets));
  });

  it('go into an answer as the same bytes as the facets themselves would', async () => {
    const next = random(11);
    const facets = [facet('applicant', 4321, next), facet('decisionYear', 51, next)];
    const page = { itemsReturned: 1, total: 1_000_000, totalRelation: 'exact', hasNextPage: true, nextCursor: null, snapshotToken: 'abc', consistency: 'live-offset' } as const;
    const data = JsonBytes.join('{"items":[', [new TextEncoder().encode('{"kNumber":"K000001"}')], ']}');
    const whole = answerParts({ data, page, facets } as never);
    const pieces = answerParts({ data, page, facets: await facetsJson(facets, async () => {}) } as never);
    expect(decoder.decode(pieces.tail)).toBe(decoder.decode(whole.tail));
    expect(decoder.decode(pieces.data)).toBe(decoder.decode(whole.data));
    // Without a page, too.
    expect(decoder.decode(answerParts({ data, facets: await facetsJson(facets, async () => {}) } as never).tail)).toBe(decoder.decode(answerParts({ data, facets } as never).tail));
  });
});
