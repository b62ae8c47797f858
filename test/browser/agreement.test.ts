import { expect, it } from 'vitest';
import { answerDifferences, type PageAnswer } from './agreement.ts';

const server: PageAnswer = { total: 12, kNumbers: ['K1', 'K2', 'K3'], facets: ['facet facet-productCode|DQY|7', 'facet facet-productCode|FOZ|5'] };

it('two equal answers agree', () => {
  expect(answerDifferences(server, structuredClone(server))).toEqual([]);
});

it('each kind of difference is named: the total, where the first page parts, the facet counts', () => {
  expect(answerDifferences(server, { ...server, total: 13 })).toEqual(['total 13 where 12']);
  expect(answerDifferences(server, { ...server, kNumbers: ['K1', 'K3', 'K2'] })).toEqual(['first page differs at #2: K3 where K2 (3 and 3 listed)']);
  expect(answerDifferences(server, { ...server, kNumbers: ['K1', 'K2'] })).toEqual(['first page differs at #3: nothing where K3 (2 and 3 listed)']);
  expect(answerDifferences(server, { ...server, facets: ['facet facet-productCode|DQY|7', 'facet facet-productCode|FOZ|4'] })).toEqual([
    'facet counts: 1 missing (facet facet-productCode|FOZ|5), 1 not expected (facet facet-productCode|FOZ|4)',
  ]);
  expect(answerDifferences(server, { ...server, facets: [...server.facets].reverse() })).toEqual(['facet counts in another order']);
  expect(answerDifferences(server, { total: 0, kNumbers: [], facets: [] })).toHaveLength(3);
});
