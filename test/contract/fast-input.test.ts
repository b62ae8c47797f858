import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FAST_INPUTS, OPERATIONS, OPERATION_NAMES } from '../../src/contract/index.ts';

/** Values near the edges of every rule: right and wrong types, bounds, spaces, case, surrogates. */
const value = fc.oneof(
  fc.constantFrom(null, undefined, true, 0, -1, 1, 1.5, 50, 51, 100, 101, 500, 501, 1899, 1900, 2024, 9999, 10000, 2 ** 53, Number.NaN),
  fc.constantFrom('K123456', ' k000001 ', 'K12345', 'k1234567', 'dqy', 'DQY', 'DQ1', '', '   ', 'clearance', 'product-code', 'x'.repeat(257), '\uD800', 'catheter'),
  fc.integer({ min: -5, max: 12000 }),
  fc.string({ maxLength: 8 }),
);

/** Values each member usually takes, so that whole valid inputs come up often. */
const usual: Record<string, fc.Arbitrary<unknown>> = {
  query: fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('catheter', ' pacemaker lead ', 'K80')),
  applicant: fc.oneof(fc.constant(null), fc.string({ maxLength: 20 })),
  productCode: fc.oneof(fc.constant(null), fc.stringMatching(/^[A-Za-z]{3}$/)),
  yearFrom: fc.oneof(fc.constant(null), fc.integer({ min: 1890, max: 2030 })),
  yearTo: fc.oneof(fc.constant(null), fc.integer({ min: 1890, max: 2030 })),
  page: fc.integer({ min: 0, max: 5 }),
  pageSize: fc.integer({ min: 0, max: 60 }),
  id: fc.stringMatching(/^ ?[Kk]\d{6} ?$/),
  limit: fc.integer({ min: 0, max: 600 }),
  kind: fc.constantFrom('clearance', 'product-code'),
  direction: fc.constantFrom('predicates', 'descendants', 'up'),
  depth: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 51 })),
  kinds: fc.constantFrom(null, ['named'], ['predicate', 'named'], [], ['named', 'named'], 'named'),
  cursor: fc.oneof(fc.constant(null), fc.string({ maxLength: 10 })),
};

const inputFor = (names: readonly string[]) =>
  fc.record(Object.fromEntries(names.map((n) => [n, fc.oneof({ weight: 4, arbitrary: usual[n] ?? value }, { weight: 1, arbitrary: value })])), { requiredKeys: [...names] }).chain((base) =>
    fc.option(fc.dictionary(fc.constantFrom('extra', '__proto__', 'limit', 'id'), value, { maxKeys: 1 }), { nil: undefined }).map((extra) => ({ ...base, ...(extra ?? {}) })),
  );

const MEMBERS: Record<string, readonly string[]> = {
  'device-510k.search': ['query', 'applicant', 'productCode', 'yearFrom', 'yearTo', 'page', 'pageSize'],
  'device-510k.detail': ['id'],
  'device-510k.classification': ['productCode'],
  'device-510k.top-product-codes': ['limit'],
  'device-510k.catalog': ['kind', 'limit', 'cursor'],
  'device-510k.meta': [],
  'device-510k.lineage': ['id', 'direction', 'depth', 'kinds', 'limit', 'cursor'],
};

describe('the fast input checks give what the schemas give, or step aside', () => {
  for (const operation of OPERATION_NAMES) {
    it(operation, () => {
      let accepted = 0;
      fc.assert(
        fc.property(inputFor(MEMBERS[operation] ?? []), (input) => {
          const fast = FAST_INPUTS[operation](input as Record<string, unknown>);
          if (fast === undefined) return;
          accepted++;
          const parsed = OPERATIONS[operation].safeParse(input);
          expect(parsed.success).toBe(true);
          expect(fast).toStrictEqual(parsed.data);
        }),
        { numRuns: 3000, seed: 510 },
      );
      // The property above holds trivially for a check that accepts nothing; the common inputs must take the fast way.
      expect(accepted).toBeGreaterThan(0);
    });
  }

  it('takes the common inputs', () => {
    const common: [keyof typeof FAST_INPUTS, Record<string, unknown>][] = [
      ['device-510k.detail', { id: 'k802527' }],
      ['device-510k.classification', { productCode: 'dqy' }],
      ['device-510k.top-product-codes', { limit: 10 }],
      ['device-510k.catalog', { kind: 'clearance', limit: 100, cursor: null }],
      ['device-510k.meta', {}],
      ['device-510k.lineage', { id: 'den200002', direction: 'descendants', depth: null, kinds: null, limit: 100, cursor: null }],
      ['device-510k.search', { query: 'catheter', applicant: null, productCode: null, yearFrom: 2000, yearTo: null, page: 1, pageSize: 10 }],
    ];
    for (const [operation, input] of common) {
      expect(FAST_INPUTS[operation](input)).toStrictEqual(OPERATIONS[operation].parse(input));
    }
  });
});
