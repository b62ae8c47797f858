import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { AnswerCache } from '../../src/utils/answer-cache.ts';
import { sourceStateOf } from '../../src/api/source-state.ts';
import type { ClearanceRecord, ProductCodeEntry } from '../../src/contract/index.ts';
import { answerOpenFda, type Endpoint } from '../../src/openfda/answer.ts';
import { COMMITTEES } from '../../src/openfda/committees.ts';
import { parseSearch } from '../../src/openfda/lucene.ts';
import { openSnapshotDirectory } from '../../src/node/index.ts';
import type { Snapshot } from '../../src/snapshot/index.ts';
import { joinBytes } from '../../src/utils/join-bytes.ts';
import { buildFixture, buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { allProductCodes, allRecords } from '../server/helpers.ts';

/**
 * /device/510k.json and /device/classification.json below HTTP, against the fixture snapshot. Every search is
 * checked against a plain scan of the fixture's records written here (the naive evaluator below: its own field
 * mapping and its own word splitting), never against the planner.
 */
const deps = { now: () => new Date('2026-01-02T00:00:00Z'), sourceState: (s: Snapshot | null, now: Date) => sourceStateOf({ manifest: s?.manifest ?? null, sync: null, now, maxAgeHours: 48 }) };

let snapshot: Snapshot;
let records: ClearanceRecord[];
let codes: Map<string, ProductCodeEntry>;

beforeAll(async () => {
  const dir = await buildFixtureSnapshot();
  snapshot = await openSnapshotDirectory(dir);
  records = await allRecords(dir);
  codes = new Map((await allProductCodes(dir)).map((e) => [e.productCode, e]));
});

type Got = { status: number; body: any; headers: Record<string, string> };
async function get(endpoint: Endpoint, query: string): Promise<Got> {
  const path = endpoint === '510k' ? '/device/510k.json' : '/device/classification.json';
  const a = await answerOpenFda(deps, snapshot, endpoint, new URL(`http://test${path}?${query}`));
  return { status: a.status, body: JSON.parse(new TextDecoder().decode(joinBytes(a.chunks))), headers: a.headers };
}
const q = (search: string, rest = '') => `search=${encodeURIComponent(search)}${rest}`;

/** Every K number a search matches, by walking its pages with skip. */
async function matches(search: string): Promise<string[]> {
  const out: string[] = [];
  for (let skip = 0; skip < 10_000; skip += 1000) {
    const r = await get('510k', q(search, `&limit=1000&skip=${skip}`));
    if (r.status === 404) break;
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    out.push(...r.body.results.map((x: { k_number: string }) => x.k_number));
    if (out.length >= r.body.meta.results.total) break;
  }
  return out.sort();
}

// ---- the naive evaluator: plain records, plain rules ----

const words = (s: string | null): string[] =>
  (s ?? '').normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w !== '');
const whole = (s: string) => s.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().replace(/\s+/g, ' ').trim();
const codeOfName = (name: string | null) => COMMITTEES.find(([, n]) => n === name)?.[0] ?? null;
const yn = (b: boolean | null) => (b === null ? null : b ? 'Y' : 'N');

/** openFDA field → the record's value, and whether openFDA analyses it as text. */
function valueOf(r: ClearanceRecord, field: string): { v: string | null; text: boolean } {
  const c = r.productCode ? codes.get(r.productCode) : undefined;
  const listed = c && (c.deviceType !== null || c.deviceClass !== null || c.regulationNumber !== null);
  switch (field) {
    case 'k_number': return { v: r.kNumber, text: false };
    case 'device_name': return { v: r.deviceName, text: true };
    case 'applicant': return { v: r.applicant, text: true };
    case 'product_code': return { v: r.productCode, text: false };
    case 'decision_code': return { v: r.decisionCode, text: false };
    case 'decision_description': return { v: r.decisionDescription, text: true };
    case 'clearance_type': return { v: r.submissionType, text: true };
    case 'review_advisory_committee': return { v: codeOfName(r.advisoryCommittee), text: false };
    case 'country_code': return { v: r.countryCode, text: false };
    case 'state': return { v: r.state, text: true };
    case 'third_party_flag': return { v: yn(r.thirdParty), text: false };
    case 'expedited_review_flag': return { v: yn(r.expeditedReview), text: true };
    case 'statement_or_summary': return { v: r.statementOrSummary, text: true };
    case 'openfda.device_class': return { v: listed ? c.deviceClass : null, text: false };
    case 'openfda.device_name': return { v: listed ? c.deviceType : null, text: true };
    case 'openfda.regulation_number': return { v: listed ? c.regulationNumber : null, text: true };
    case 'openfda.medical_specialty_description': return { v: listed ? (c.medicalSpecialty ?? 'Unknown') : null, text: true };
    default: throw new Error(`naive evaluator has no field ${field}`);
  }
}

type Test = (r: ClearanceRecord) => boolean;
const dateOf = (s: string) => s.replace(/-/g, '');

/** A hand-written reading of each case's search: the tree is given directly, not parsed. */
const has = (field: string, term: string, opts: { exact?: boolean; prefix?: boolean } = {}): Test => (r) => {
  if (field === 'decision_date' || field === 'date_received') {
    const d = field === 'decision_date' ? r.decisionDate : r.receivedDate;
    return d !== null && dateOf(d) === dateOf(term);
  }
  const { v, text } = valueOf(r, field);
  if (v === null) return false;
  if (field === 'k_number') return opts.prefix ? v.startsWith(term.toUpperCase()) : v === term.toUpperCase();
  if (!text || opts.exact) return opts.prefix ? whole(v).startsWith(whole(term)) : whole(v) === whole(term);
  const w = words(v);
  if (opts.prefix) return w.some((x) => x.startsWith(term.toLowerCase()));
  const t = words(term);
  for (let s = 0; s + t.length <= w.length; s++) if (t.every((x, k) => w[s + k] === x)) return true;
  return false;
};
const between = (field: 'decision_date' | 'date_received', lo: string | null, hi: string | null, inc = [true, true]): Test => (r) => {
  const d = field === 'decision_date' ? r.decisionDate : r.receivedDate;
  if (d === null) return false;
  const x = dateOf(d);
  if (lo !== null && (inc[0] ? x < dateOf(lo) : x <= dateOf(lo))) return false;
  if (hi !== null && (inc[1] ? x > dateOf(hi) : x >= dateOf(hi))) return false;
  return true;
};
const exists = (field: string): Test => (r) =>
  field === 'decision_date' ? r.decisionDate !== null : field === 'date_received' ? r.receivedDate !== null : valueOf(r, field).v !== null;
const and = (...t: Test[]): Test => (r) => t.every((f) => f(r));
const or = (...t: Test[]): Test => (r) => t.some((f) => f(r));
const not = (t: Test): Test => (r) => !t(r);

const CASES: [rule: string, search: string, naive: Test][] = [
  ['field:term on a text field (a word)', 'device_name:pacemaker', has('device_name', 'pacemaker')],
  ['text matching ignores case', 'device_name:PaceMaker', has('device_name', 'pacemaker')],
  ['field:term on a keyword field (whole value)', 'product_code:DTB', has('product_code', 'DTB')],
  ['field:"phrase"', 'device_name:"pacemaker lead"', has('device_name', 'pacemaker lead')],
  ['a term of several words is a phrase', 'device_name:x-ray', has('device_name', 'x ray')],
  ['trailing wildcard on text', 'device_name:cathet*', has('device_name', 'cathet', { prefix: true })],
  ['trailing wildcard on a keyword', 'product_code:DT*', has('product_code', 'DT', { prefix: true })],
  ['trailing wildcard on k_number', 'k_number:K80*', has('k_number', 'K80', { prefix: true })],
  ['k_number', 'k_number:K801853', has('k_number', 'K801853')],
  ['date YYYYMMDD', 'decision_date:19800813', has('decision_date', '19800813')],
  ['date YYYY-MM-DD', 'decision_date:1980-08-13', has('decision_date', '19800813')],
  ['inclusive date range', 'decision_date:[19800101 TO 19821231]', between('decision_date', '19800101', '19821231')],
  ['exclusive date range', 'decision_date:{19800813 TO 19821231}', between('decision_date', '19800813', '19821231', [false, false])],
  ['open range with *', 'decision_date:[20150101 TO *]', between('decision_date', '20150101', null)],
  ['range on date_received', 'date_received:[2020-01-01 TO 2020-12-31]', between('date_received', '20200101', '20201231')],
  ['>= comparison', 'date_received:>=20200101', between('date_received', '20200101', null)],
  ['AND', 'device_name:catheter AND country_code:US', and(has('device_name', 'catheter'), has('country_code', 'US'))],
  ['OR', 'product_code:DTB OR product_code:DXY', or(has('product_code', 'DTB'), has('product_code', 'DXY'))],
  ['a space is OR', 'product_code:DTB product_code:DXY', or(has('product_code', 'DTB'), has('product_code', 'DXY'))],
  ['a + is OR', 'product_code:DTB+product_code:DXY', or(has('product_code', 'DTB'), has('product_code', 'DXY'))],
  ['NOT', 'device_name:catheter AND NOT country_code:US', and(has('device_name', 'catheter'), not(has('country_code', 'US')))],
  ['a leading - is NOT', 'device_name:catheter AND -country_code:US', and(has('device_name', 'catheter'), not(has('country_code', 'US')))],
  // As Lucene (and so openFDA) reads them: a NOT clause beside others joined by OR (or a space) is excluded from them.
  ['a - clause beside another excludes its matches', 'device_name:catheter -country_code:US', and(has('device_name', 'catheter'), not(has('country_code', 'US')))],
  ['a NOT clause beside another excludes its matches', 'device_name:catheter NOT country_code:US', and(has('device_name', 'catheter'), not(has('country_code', 'US')))],
  ['OR NOT excludes from the OR', 'product_code:DTB OR product_code:DXY OR NOT country_code:US', and(or(has('product_code', 'DTB'), has('product_code', 'DXY')), not(has('country_code', 'US')))],
  ['NOT clauses alone exclude each', '-country_code:US -state:MN', and(not(has('country_code', 'US')), not(has('state', 'MN')))],
  ['a parenthesized NOT is a clause of its own', 'product_code:DTB OR (NOT country_code:US)', or(has('product_code', 'DTB'), not(has('country_code', 'US')))],
  ['AND binds tighter than OR', 'product_code:DTB OR device_name:catheter AND country_code:US', or(has('product_code', 'DTB'), and(has('device_name', 'catheter'), has('country_code', 'US')))],
  ['parentheses', '(product_code:DTB OR device_name:catheter) AND country_code:US', and(or(has('product_code', 'DTB'), has('device_name', 'catheter')), has('country_code', 'US'))],
  ['field:(a b) applies the field to each', 'product_code:(DTB DXY)', or(has('product_code', 'DTB'), has('product_code', 'DXY'))],
  ['_exists_', '_exists_:state', exists('state')],
  ['_missing_', '_missing_:state', not(exists('state'))],
  ['_missing_ on a date', '_missing_:date_received', not(exists('date_received'))],
  ['.exact on a text field', 'applicant.exact:"C.D. Charles, Inc."', has('applicant', 'C.D. Charles, Inc.', { exact: true })],
  ['.exact does not match a word', 'openfda.device_name.exact:Parallelometer', has('openfda.device_name', 'Parallelometer', { exact: true })],
  ['applicant words', 'applicant:medical', has('applicant', 'medical')],
  ['decision_code', 'decision_code:SESE', has('decision_code', 'SESE')],
  ['clearance_type', 'clearance_type:traditional', has('clearance_type', 'traditional')],
  ['review_advisory_committee (codes)', 'review_advisory_committee:CV', has('review_advisory_committee', 'CV')],
  ['state', 'state:MN', has('state', 'MN')],
  ['third_party_flag', 'third_party_flag:Y', has('third_party_flag', 'Y')],
  ['expedited_review_flag', 'expedited_review_flag:N', has('expedited_review_flag', 'N')],
  ['statement_or_summary', 'statement_or_summary:summary', has('statement_or_summary', 'summary')],
  ['openfda.device_class', 'openfda.device_class:3', has('openfda.device_class', '3')],
  ['openfda.device_name words', 'openfda.device_name:electrode', has('openfda.device_name', 'electrode')],
  ['openfda.regulation_number', 'openfda.regulation_number:870.3680', has('openfda.regulation_number', '870.3680')],
  ['openfda.medical_specialty_description', 'openfda.medical_specialty_description:cardiovascular', has('openfda.medical_specialty_description', 'cardiovascular')],
  ['a term without a field', 'pacemaker', or(has('device_name', 'pacemaker'), has('applicant', 'pacemaker'), has('openfda.device_name', 'pacemaker'))],
  ['no search: everything', '', () => true],
];

describe('search syntax, rule by rule, against a plain scan of the records', () => {
  it.each(CASES)('%s: %s', async (_rule, search, naive) => {
    const want = records.filter(naive).map((r) => r.kNumber).sort();
    const got = await matches(search);
    expect(got).toEqual(want);
    if (want.length > 0) expect((await get('510k', q(search))).body.meta.results.total).toBe(want.length);
    else expect((await get('510k', q(search))).status).toBe(404);
  });

  it('the cases are not vacuous: most match some records and miss others', () => {
    const sizes = CASES.map(([, , t]) => records.filter(t).length);
    expect(sizes.filter((n) => n > 0 && n < records.length).length).toBeGreaterThan(CASES.length * 0.8);
  });
});

describe('parser', () => {
  it('reads the tree openFDA documents', () => {
    // OR NOT: the NOT clause is prohibited (Lucene's reading), so it is taken out of what the rest matches.
    expect(parseSearch('a:b AND c:"d e" OR NOT f:[1 TO *}')).toEqual({
      type: 'and',
      children: [
        { type: 'and', children: [{ type: 'term', field: { name: 'a', exact: false }, value: 'b', prefix: false }, { type: 'phrase', field: { name: 'c', exact: false }, value: 'd e' }] },
        { type: 'not', child: { type: 'range', field: { name: 'f', exact: false }, lo: '1', hi: null, loInclusive: true, hiInclusive: false } },
      ],
    });
    expect(parseSearch('x.exact:yy*')).toEqual({ type: 'term', field: { name: 'x', exact: true }, value: 'yy', prefix: true });
  });
  it.each([
    ['device_name:"open', 'never closed'],
    ['(device_name:a', 'never closed'],
    ['device_name:a AND', 'nothing after it'],
    ['device_name:c*t', 'only at the end'],
    ['device_name:a?', 'not supported'],
    ['device_name:*', 'at least two characters'],
    ['decision_date:[2020 TO]', 'must read'],
    ['device_name:catheter~', 'fuzzy'],
    ['device_name:catheter~0.8', 'fuzzy'],
    ['device_name:"balloon catheter"~2', 'proximity'],
    ['device_name:catheter^2', 'boost'],
    ['product_code:/DQ./', 'regular expression'],
  ])('%s is a 400 that says why', async (search, words) => {
    const r = await get('510k', q(search));
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: { code: 'BAD_REQUEST', message: expect.stringContaining(words) } });
  });
});

describe('errors in openFDA shape', () => {
  it('no match is a 404 NOT_FOUND "No matches found!"', async () => {
    const r = await get('510k', q('device_name:zzzznotaword'));
    expect(r).toEqual({ status: 404, headers: {}, body: { error: { code: 'NOT_FOUND', message: 'No matches found!' } } });
  });
  it('a skip past the last match is a 404', async () => {
    const total = (await get('510k', q('product_code:DTB'))).body.meta.results.total;
    expect((await get('510k', q('product_code:DTB', `&skip=${total}`))).status).toBe(404);
  });
  it.each([
    ['foo=1', 'Invalid parameter: foo'],
    ['limit=1001', 'Limit cannot exceed 1000'],
    ['limit=-1', 'limit must be a whole number'],
    ['skip=abc', 'skip must be a whole number'],
    ['count=product_code&skip=1', 'skip param when using count'],
    ['search=city:Rochester', 'city is returned in every record but is not in'],
    ['search=decision_description:equivalent', 'decision_description is returned in every record but is not in'],
    ['search=openfda.fei_number:1', 'not in this service'],
    ['search=nosuch:1', 'nosuch is not a field'],
    ['search=decision_date:2020', 'YYYYMMDD or YYYY-MM-DD'],
    ['count=nosuch', 'nosuch is not a field'],
    ['sort=device_name:asc', 'Sorting allowed by non-analyzed fields only'],
    ['limit=1&limit=2', 'more than once'],
  ])('%s → 400 naming the problem', async (query, words) => {
    const r = await get('510k', query);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: { code: 'BAD_REQUEST', message: expect.stringContaining(words) } });
  });
  it('api_key is accepted and ignored', async () => {
    expect((await get('510k', 'api_key=abc')).status).toBe(200);
  });
  it('a query over the clause bound is refused', async () => {
    const search = Array.from({ length: 300 }, (_, i) => `a:${i}`).join(' ');
    const r = await get('510k', q(search));
    expect(r.status).toBe(400);
    expect(r.body.error.message).toContain('at most 256');
  });
});

describe('answers', () => {
  it('meta is openFDA\'s, plus freshness; limit defaults to 1', async () => {
    const r = await get('510k', '');
    expect(Object.keys(r.body.meta)).toEqual(['disclaimer', 'terms', 'license', 'last_updated', 'source_state', 'results']);
    expect(r.body.meta.results).toEqual({ skip: 0, limit: 1, total: records.length });
    expect(r.body.meta.last_updated).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(r.body.results).toHaveLength(1);
  });

  it('count=field: exact counts of every value, by count, with the number of terms', async () => {
    const r = await get('510k', 'count=product_code&limit=100000');
    const plain = new Map<string, number>();
    for (const rec of records) if (rec.productCode) plain.set(rec.productCode, (plain.get(rec.productCode) ?? 0) + 1);
    expect(r.body.meta.total_terms).toBe(plain.size);
    expect(new Map(r.body.results.map((x: { term: string; count: number }) => [x.term, x.count]))).toEqual(plain);
    const counts = r.body.results.map((x: { count: number }) => x.count);
    expect(counts).toEqual([...counts].sort((a, b) => b - a));
    expect((await get('510k', 'count=product_code')).body.results).toHaveLength(Math.min(100, plain.size));
  });

  it('count on a date field: every day with a match, in time order, whatever the limit', async () => {
    const r = await get('510k', q('device_name:catheter', '&count=decision_date&limit=1'));
    const plain = new Map<string, number>();
    for (const rec of records.filter(has('device_name', 'catheter'))) if (rec.decisionDate) plain.set(dateOf(rec.decisionDate), (plain.get(dateOf(rec.decisionDate)) ?? 0) + 1);
    expect(r.body.results).toEqual([...plain.entries()].sort().map(([time, count]) => ({ time, count })));
  });

  it.each([
    ['decision_date', ''],
    ['date_received', ''],
    ['date_received', 'device_name:catheter'],
    ['decision_date', 'decision_date:[19800101 TO 19891231] OR product_code:DTB'],
  ] as const)('count=%s over %j: every day with a match, as a plain count of the records', async (field, search) => {
    const r = await get('510k', `${search === '' ? '' : `${q(search)}&`}count=${field}`);
    const plain = new Map<string, number>();
    const test: Test = search === '' ? () => true : search === 'device_name:catheter' ? has('device_name', 'catheter') : or(has('product_code', 'DTB'), between('decision_date', '19800101', '19891231'));
    const subset = records.filter(test);
    for (const rec of subset) {
      const d = field === 'decision_date' ? rec.decisionDate : rec.receivedDate;
      if (d) plain.set(dateOf(d), (plain.get(dateOf(d)) ?? 0) + 1);
    }
    expect(plain.size).toBeGreaterThan(1);
    expect(r.body.meta.total_terms).toBe(plain.size);
    expect(r.body.results).toEqual([...plain.entries()].sort().map(([time, count]) => ({ time, count })));
  });

  it('count of text words, and of .exact whole values', async () => {
    const words = await get('510k', q('product_code:DTB', '&count=applicant&limit=1000'));
    const exact = await get('510k', q('product_code:DTB', '&count=applicant.exact&limit=1000'));
    const dtb = records.filter(has('product_code', 'DTB'));
    const plainWords = new Map<string, number>();
    for (const r of dtb) for (const w of new Set(wordsOf(r.applicant))) plainWords.set(w, (plainWords.get(w) ?? 0) + 1);
    expect(new Map(words.body.results.map((x: { term: string; count: number }) => [x.term, x.count]))).toEqual(plainWords);
    expect(exact.body.results.reduce((n: number, x: { count: number }) => n + x.count, 0)).toBe(dtb.filter((r) => r.applicant).length);
  });

  it('Link walks every match exactly once, and the last page has none', async () => {
    for (const [search, limit] of [['device_name:catheter OR product_code:DXY', 3], ['', 37]] as const) {
      const want = records.filter(search === '' ? () => true : or(has('device_name', 'catheter'), has('product_code', 'DXY'))).map((r) => r.kNumber);
      let url: string | null = `http://test/device/510k.json?${q(search, `&limit=${limit}`)}`;
      const seen: string[] = [];
      for (let pages = 0; url && pages < 1000; pages++) {
        const a = await answerOpenFda(deps, snapshot, '510k', new URL(url));
        expect(a.status).toBe(200);
        const body = JSON.parse(new TextDecoder().decode(joinBytes(a.chunks)));
        seen.push(...body.results.map((x: { k_number: string }) => x.k_number));
        url = a.headers.Link ? /^<([^>]+)>; rel="next"$/.exec(a.headers.Link)![1]! : null;
        if (url) expect(new URL(url).searchParams.get('limit')).toBe(String(limit));
      }
      expect(seen.sort()).toEqual(want.sort());
      expect(new Set(seen).size).toBe(seen.length);
    }
  });

  it('a page that ends exactly at the last match has no Link', async () => {
    const total = (await get('510k', q('product_code:DTB'))).body.meta.results.total;
    expect((await get('510k', q('product_code:DTB', `&limit=${total}`))).headers.Link).toBeUndefined();
    expect((await get('510k', q('product_code:DTB', `&limit=${total - 1}`))).headers.Link).toBeDefined();
  });
});

const wordsOf = words;

describe('the answer cache', () => {
  it('keeps an answer once for every spelling of a request; source_state and Link are each request\'s own', async () => {
    let clock = Date.parse('2026-01-02T00:00:00Z');
    const cache = new AnswerCache(1 << 20);
    const cached = { ...deps, now: () => new Date((clock += 1000)), answerCache: cache };
    const ask = async (query: string) => {
      const a = await answerOpenFda(cached, snapshot, '510k', new URL(`http://test/device/510k.json?${query}`));
      return { status: a.status, text: new TextDecoder().decode(joinBytes(a.chunks)), headers: a.headers };
    };
    const servedAt = (text: string) => JSON.parse(text).meta.source_state.servedAt as string;
    const timeless = (text: string) => text.replace(/"servedAt":"[^"]*"/, '"servedAt":""');
    const uncached = await answerOpenFda(deps, snapshot, '510k', new URL('http://test/device/510k.json?search=product_code:DTB&limit=2'));

    const first = await ask('search=product_code:DTB&limit=2');
    const weight = cache.weightFor(snapshot);
    expect(weight).toBeGreaterThan(0);
    const second = await ask(`api_key=abc&limit=2&search=${encodeURIComponent('  product_code:DTB ')}`);
    // The second spelling was answered from the first one's entry: nothing was added.
    expect(cache.weightFor(snapshot)).toBe(weight);
    expect(timeless(second.text)).toBe(timeless(first.text));
    expect(timeless(first.text)).toBe(timeless(new TextDecoder().decode(joinBytes(uncached.chunks))));
    expect(servedAt(second.text)).not.toBe(servedAt(first.text));
    expect(first.headers.Link).toBe('<http://test/device/510k.json?search=product_code%3ADTB&limit=2&skip=2>; rel="next"');
    expect(second.headers.Link).toBe('<http://test/device/510k.json?api_key=abc&limit=2&search=++product_code%3ADTB+&skip=2>; rel="next"');

    // Another question is an entry of its own; errors are not kept.
    const count = await ask('count=decision_date');
    expect(cache.weightFor(snapshot)).toBeGreaterThan(weight);
    expect(JSON.parse(count.text).results.length).toBe(JSON.parse(count.text).meta.total_terms);
    const before = cache.weightFor(snapshot);
    expect((await ask('search=product_code:NOSUCH')).status).toBe(404);
    expect(cache.weightFor(snapshot)).toBe(before);
  });
});

describe('the answer cache is keyed on every parameter that changes an answer', () => {
  // Each question differs from the one before it in one parameter (or the endpoint): asked through one cache, every
  // answer must equal the answer computed without a cache, first when computed and kept, then when taken from it.
  const QUESTIONS: [Endpoint, string][] = [
    ['510k', 'search=product_code:DTB&limit=2'],
    ['510k', 'search=product_code:DXY&limit=2'],
    ['510k', 'search=product_code:DXY&limit=3'],
    ['510k', 'search=product_code:DXY&limit=3&skip=1'],
    ['510k', 'search=product_code:DXY&limit=3&skip=1&sort=decision_date:asc'],
    ['510k', 'search=product_code:DXY&limit=3&skip=1&sort=decision_date:desc'],
    ['510k', 'search=product_code:DXY&limit=3&sort=decision_date:desc&search_after=0%3D19860114%3B1%3DK851968'],
    ['510k', 'search=product_code:DXY&limit=3&sort=decision_date:desc&search_after=0%3D19810923%3B1%3DK801339'],
    ['510k', 'search=product_code:DXY&count=decision_date'],
    ['510k', 'search=product_code:DXY&count=date_received'],
    ['510k', 'search=product_code:DXY&count=applicant.exact'],
    ['510k', 'search=product_code:DXY&count=applicant'],
    ['510k', 'search=product_code:DXY&count=applicant&limit=1'],
    ['510k', `search=${encodeURIComponent('product_code:DXY AND decision_date:[19800101 TO 19991231]')}&count=applicant&limit=1`],
    ['classification', 'search=product_code:DXY&count=device_class'],
    ['classification', 'search=product_code:DXY'],
    ['510k', 'search=product_code:DXY'],
  ];
  it('cached and computed answers are equal, question by question', async () => {
    const cached = { ...deps, answerCache: new AnswerCache(1 << 22) };
    const text = async (d: typeof deps, [endpoint, query]: [Endpoint, string]) => {
      const path = endpoint === '510k' ? '/device/510k.json' : '/device/classification.json';
      const a = await answerOpenFda(d, snapshot, endpoint, new URL(`http://test${path}?${query}`));
      return { status: a.status, link: a.headers.Link ?? null, text: new TextDecoder().decode(joinBytes(a.chunks)) };
    };
    const computed = await Promise.all(QUESTIONS.map((question) => text(deps, question)));
    // Each question answers something of its own (so a shared key would show).
    expect(computed.every((c) => c.status === 200)).toBe(true);
    expect(new Set(computed.map((c) => c.text)).size).toBe(QUESTIONS.length);
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < QUESTIONS.length; i++) expect(await text(cached, QUESTIONS[i]!), QUESTIONS[i]!.join(' ')).toEqual(computed[i]);
    }
  });
});

describe('sort and search_after', () => {
  it.each([['decision_date:asc'], ['decision_date:desc'], ['date_received:desc'], ['k_number:desc'], ['product_code:asc'], ['applicant.exact:asc']])('sort=%s is a total order, walked whole by search_after', async (sort) => {
    const [field, dir] = sort.split(':') as [string, string];
    const key = (r: ClearanceRecord): string | null => {
      switch (field) {
        case 'decision_date': return r.decisionDate;
        case 'date_received': return r.receivedDate;
        case 'k_number': return r.kNumber;
        case 'product_code': return r.productCode;
        default: return null;
      }
    };
    let url: string | null = `http://test/device/510k.json?sort=${sort}&limit=50&search_after=`;
    // The first page has no key yet: it starts from skip=0, later pages from the Link's search_after.
    url = `http://test/device/510k.json?sort=${sort}&limit=50`;
    const first = await answerOpenFda(deps, snapshot, '510k', new URL(url));
    const body = JSON.parse(new TextDecoder().decode(joinBytes(first.chunks)));
    const seen: any[] = [...body.results];
    let next = first.headers.Link ? /^<([^>]+)>/.exec(first.headers.Link)![1]! : null;
    // Convert the first skip-Link into a search_after walk from the first page's last record.
    for (let pages = 0; next && pages < 1000; pages++) {
      const a = await answerOpenFda(deps, snapshot, '510k', new URL(next));
      const b = JSON.parse(new TextDecoder().decode(joinBytes(a.chunks)));
      seen.push(...b.results);
      next = a.headers.Link ? /^<([^>]+)>/.exec(a.headers.Link)![1]! : null;
    }
    expect(seen.map((r) => r.k_number).sort()).toEqual(records.map((r) => r.kNumber).sort());
    if (field !== 'applicant.exact') {
      const want = [...records].sort((a, b) => {
        const x = key(a), y = key(b);
        if (x !== y) {
          if (x === null) return 1;
          if (y === null) return -1;
          return (x < y ? -1 : 1) * (dir === 'desc' ? -1 : 1);
        }
        return a.kNumber < b.kNumber ? -1 : 1;
      });
      expect(seen.map((r) => r.k_number)).toEqual(want.map((r) => r.kNumber));
    }
    void url;
  });

  it('search_after resumes just after the given record, and its Link carries the next key', async () => {
    const all = (await get('510k', 'sort=decision_date:asc&limit=1000')).body.results.map((r: { k_number: string }) => r.k_number);
    const firstPage = await get('510k', 'sort=decision_date:asc&limit=10');
    const last = firstPage.body.results[9];
    const after = `0=${last.decision_date.replaceAll('-', '')};1=${last.k_number}`;
    const second = await get('510k', `sort=decision_date:asc&limit=10&search_after=${encodeURIComponent(after)}`);
    expect(second.body.results.map((r: { k_number: string }) => r.k_number)).toEqual(all.slice(10, 20));
    expect(new URL(/^<([^>]+)>/.exec(second.headers.Link!)![1]!).searchParams.get('search_after')).toBe(`0=${second.body.results[9].decision_date.replaceAll('-', '')};1=${second.body.results[9].k_number}`);
  });

  it('search_after without sort walks the default order', async () => {
    const all = (await get('510k', 'limit=1000')).body.results.map((r: { k_number: string }) => r.k_number);
    const seen: string[] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 1000; pages++) {
      const r: Got = await get('510k', `limit=25${after ? `&search_after=${encodeURIComponent(after)}` : ''}`);
      if (r.status === 404) break;
      seen.push(...r.body.results.map((x: { k_number: string }) => x.k_number));
      if (!r.headers.Link && after !== null) break;
      after = r.headers.Link ? new URL(/^<([^>]+)>/.exec(r.headers.Link)![1]!).searchParams.get('search_after') : null;
      if (after === null) {
        // The first page pages by skip; resume it by the key of its last record instead.
        const last = r.body.results[r.body.results.length - 1];
        const rec = records.find((x) => x.kNumber === last.k_number)!;
        after = `0=${rec.decisionDate ? (Date.parse(rec.decisionDate) / 86_400_000 + 25_568).toString() : ''};1=${rec.kNumber}`;
      }
    }
    expect(seen).toEqual(all);
  });
});

describe('records', () => {
  it('each record is the /v1/query record, mapped once, with its classification', async () => {
    const r = await get('510k', q('product_code:DTB', '&limit=1'));
    const rec = records.find((x) => x.kNumber === r.body.results[0].k_number)!;
    const c = codes.get(rec.productCode!)!;
    expect(r.body.results[0]).toMatchObject({
      k_number: rec.kNumber,
      device_name: rec.deviceName,
      applicant: rec.applicant ?? '',
      decision_date: rec.decisionDate ?? '',
      date_received: rec.receivedDate ?? '',
      third_party_flag: yn(rec.thirdParty) ?? '',
      openfda: { device_name: c.deviceType, device_class: c.deviceClass, regulation_number: c.regulationNumber ?? '' },
    });
  });

  it('the committee table agrees with the one the build reads', () => {
    const csv = readFileSync(new URL('../../data/fda/lookups/advisory-committees.csv', import.meta.url), 'utf8');
    const rows = csv.trim().split(/\r?\n/).slice(1).map((l) => {
      const m = /^([A-Z]{2}),(?:"([^"]*)"|(.*))$/.exec(l)!;
      return [m[1], m[2] ?? m[3]];
    });
    expect(COMMITTEES.map(([a, b]) => [a, b])).toEqual(rows);
  });
});

describe('the record shape against 100 real openFDA records', () => {
  it('every record equals openFDA\'s field by field, apart from establishment numbers and the listed known differences', async () => {
    const top = new URL('../../data/fda/510k/Frederic1011_CICC-IBD-Healthcare-FDA510k-Weekly-Tracker/original_dataset_2_510k_Top100.json', import.meta.url);
    const foi = new URL('../../data/fda/classification/Frederic1011_CICC-IBD-Healthcare-FDA510k-Weekly-Tracker/original_dataset_1_foiclass.txt', import.meta.url);
    const { out } = await buildFixture({ sources: [top.pathname, foi.pathname] });
    const snap = await openSnapshotDirectory(out);
    const real: Record<string, any>[] = JSON.parse(readFileSync(top, 'utf8')).results;
    const differences: string[] = [];
    let compared = 0;
    for (const want of real) {
      const a = await answerOpenFda(deps, snap, '510k', new URL(`http://test/device/510k.json?search=k_number:${want.k_number}`));
      if (a.status === 404) {
        differences.push(`${want.k_number}: absent`);
        continue;
      }
      const ours = JSON.parse(new TextDecoder().decode(joinBytes(a.chunks))).results[0];
      const { registration_number: _r, fei_number: _f, ...openfda } = want.openfda;
      const expected: Record<string, unknown> = { ...want, openfda };
      expect(Object.keys(ours)).toEqual(Object.keys(expected));
      for (const k of Object.keys(expected)) {
        if (JSON.stringify(ours[k]) !== JSON.stringify(expected[k])) differences.push(`${want.k_number}: ${k}`);
      }
      compared++;
    }
    expect(compared).toBe(99);
    // Known, explained differences (the report lists them): the build collapses runs of spaces in text (FDA's
    // contact names join first and last name with two), repairs openFDA's U+0099 into ™, and keeps only 510(k)s.
    const known = (d: string) => d.endsWith(': contact') || d === 'K222351: device_name' || d === 'DEN210032: absent';
    expect(differences.filter((d) => !known(d))).toEqual([]);
    const contacts = real.filter((r) => r.k_number.startsWith('K') && /\s{2}/.test(r.contact)).map((r) => `${r.k_number}: contact`);
    expect(differences.filter((d) => d.endsWith(': contact')).sort()).toEqual(contacts.sort());
  });
});

describe('/device/classification.json', () => {
  it('searches, counts and pages the classification entries', async () => {
    const entries = [...codes.values()].filter((e) => e.deviceType !== null || e.deviceClass !== null);
    const class3 = entries.filter((e) => e.deviceClass === '3').map((e) => e.productCode).sort();
    const r = await get('classification', q('device_class:3', '&limit=1000'));
    expect(r.body.results.map((x: { product_code: string }) => x.product_code)).toEqual(class3);
    const c = await get('classification', 'count=device_class&limit=100');
    const plain = new Map<string, number>();
    for (const e of codes.values()) if (e.deviceClass) plain.set(e.deviceClass, (plain.get(e.deviceClass) ?? 0) + 1);
    expect(new Map(c.body.results.map((x: { term: string; count: number }) => [x.term, x.count]))).toEqual(plain);
    const dtb = (await get('classification', q('product_code:DTB'))).body.results[0];
    expect(dtb.openfda.k_number).toEqual(records.filter((x) => x.productCode === 'DTB').map((x) => x.kNumber).sort());
    expect(dtb).toMatchObject({ product_code: 'DTB', medical_specialty: 'CV', review_panel: 'CV' });
  });
});
