import { readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { bundleEngine, bundleRules, ENGINE_BUNDLE, RULES_BUNDLE } from '../../build/page/bundle.ts';
import { loadSearchIndex } from '../../src/search/load.ts';
import type { SearchIndex } from '../../src/search/model.ts';
import { runSearch } from '../../src/search/engine.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { lineageNumber } from '../../src/contract/lineage.ts';

type Engine = {
  loadSearchIndex: typeof loadSearchIndex;
  runSearch: typeof runSearch;
  yearCounts(index: SearchIndex): { year: number | null; count: number }[];
};

describe('the browser bundle of the search engine', () => {
  let dir: string;
  let engine: Engine;
  const read = (path: string) => readFile(join(dir, path)).then((b) => new Uint8Array(b));

  beforeAll(async () => {
    dir = await realpath(await buildFixtureSnapshot());
    engine = (await import(ENGINE_BUNDLE)) as Engine;
  });

  test('is what the sources give today (run npm run build:page after changing src/search)', async () => {
    expect(await readFile(ENGINE_BUNDLE, 'utf8')).toBe(await bundleEngine());
  });

  test("the page's copy of the service's rules is what the sources give today, and carries no schema library", async () => {
    const text = await readFile(RULES_BUNDLE, 'utf8');
    expect(text).toBe(await bundleRules());
    expect(text).not.toMatch(/zod/);
  });

  test('answers exactly as the engine the API runs', async () => {
    const api = await loadSearchIndex(read);
    const page = await engine.loadSearchIndex(read);
    const base = { query: '', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 50 };
    // A device some fixture clearance names, for predicate: and the predicate facet.
    const cited = lineageNumber(api.predCodes[api.docPreds[0]!]!);
    const predicates = { ...base, query: `predicate:${cited}`, facets: [{ field: 'predicate' as const, size: null, order: 'count' as const }] };
    for (const req of [base, { ...base, query: 'catheter' }, { ...base, query: 'pace', page: 2, pageSize: 10 }, { ...base, yearFrom: 1980, yearTo: 1985 }, predicates, { ...base, query: 'kind:named' }]) {
      const want = runSearch(api, req);
      expect(want.total).toBeGreaterThan(0);
      expect(engine.runSearch(page, req)).toEqual(want);
    }
    const years = engine.yearCounts(page);
    expect(years.reduce((n, y) => n + y.count, 0)).toBe(api.docCount);
    const yearsAsc = years.filter((y) => y.year !== null).map((y) => y.year!);
    expect(yearsAsc).toEqual([...yearsAsc].sort((a, b) => a - b));
    for (const { year, count } of years.filter((y) => y.year !== null).slice(0, 3)) {
      expect(runSearch(api, { ...base, yearFrom: year, yearTo: year }).total).toBe(count);
    }
  });

  test("bounds a facet's values as the API's engine does: every value at the bound, refused one below it", async () => {
    const api = await loadSearchIndex(read);
    const page = await engine.loadSearchIndex(read);
    // Every record once under each device it names: the predicates cited, as counted from the index's own lists.
    const cited = new Set<number>();
    for (let i = 0; i < api.docPreds.length; i++) cited.add(api.docPreds[i]!);
    expect(cited.size).toBeGreaterThan(10);
    const req = { query: '', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 1, facets: [{ field: 'predicate' as const, size: null, order: 'value' as const }] };
    const whole = engine.runSearch(page, { ...req, facetValuesMax: cited.size });
    expect(whole).toEqual(runSearch(api, { ...req, facetValuesMax: cited.size }));
    expect((whole.facets[0] as { values: unknown[] }).values).toHaveLength(cited.size);
    const refusal = (run: () => unknown) => {
      try {
        run();
      } catch (err) {
        return { name: (err as Error).name, message: (err as Error).message };
      }
      return null;
    };
    const over = refusal(() => engine.runSearch(page, { ...req, facetValuesMax: cited.size - 1 }));
    expect(over).toEqual({ name: 'FacetValuesError', message: expect.stringContaining(`would list ${cited.size.toLocaleString('en-US')} values of "predicate"`) });
    expect(over).toEqual(refusal(() => runSearch(api, { ...req, facetValuesMax: cited.size - 1 })));
  });

  test("checks the index header with the subset of zod it carries: a damaged header is refused", async () => {
    const header = JSON.parse(new TextDecoder().decode(await read('search/index.json')));
    const withHeader = (h: unknown) => (path: string) =>
      path === 'search/index.json' ? Promise.resolve(new TextEncoder().encode(JSON.stringify(h))) : read(path);
    await expect(engine.loadSearchIndex(withHeader({ ...header, extra: 1 }))).rejects.toThrow(/header is invalid: header\.extra is not expected/);
    await expect(engine.loadSearchIndex(withHeader({ ...header, version: 99 }))).rejects.toThrow(/header\.version must be/);
    await expect(engine.loadSearchIndex(withHeader({ ...header, partBytes: 12 }))).rejects.toThrow(/partBytes must be a multiple of 8/);
    await expect(engine.loadSearchIndex(withHeader({ ...header, sections: [{ ...header.sections[0], name: 'nope' }] }))).rejects.toThrow(/sections\[0\]\.name must be one of/);
    await expect(engine.loadSearchIndex(withHeader({ ...header, counts: { ...header.counts, predicates: 'many' } }))).rejects.toThrow(/header\.counts\.predicates must be an integer/);
    await expect(engine.loadSearchIndex(withHeader(header))).resolves.toBeTruthy();
  });
});
