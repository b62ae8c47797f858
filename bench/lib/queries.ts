import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LAYOUT, RecordShard, ShardIndex, type ClearanceRecord, type SearchInput } from '../../src/contract/index.ts';
import { tokenize } from '../../src/search/tokenize.ts';
import { mulberry32 as random } from '../../test/helpers/random.ts';

/**
 * The deterministic, realistic query set: words, prefixes, pairs, applicants, codes, K numbers and filters drawn from
 * a snapshot's own records, so the same snapshot and seed always give the same questions.
 */
export type Query = { kind: string; input: SearchInput };

/** The records of about `count` record shards spread evenly over the snapshot. */
export async function sampleRecords(dir: string, count: number): Promise<ClearanceRecord[]> {
  const index = ShardIndex.parse(JSON.parse(await readFile(join(dir, LAYOUT.recordIndex), 'utf8')));
  const step = Math.max(1, Math.floor(index.shards.length / count));
  const out: ClearanceRecord[] = [];
  for (let i = 0; i < index.shards.length; i += step) {
    out.push(...RecordShard.parse(JSON.parse(await readFile(join(dir, index.shards[i]!.path), 'utf8'))));
  }
  return out;
}

/** Realistic questions drawn from real records: words, prefixes, pairs, applicants, codes, K numbers, filters. */
export function makeQueries(records: ClearanceRecord[], n: number, seed: number): Query[] {
  const rnd = random(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const base = (): SearchInput => ({
    query: '',
    applicant: null,
    productCode: null,
    yearFrom: null,
    yearTo: null,
    page: rnd() < 0.8 ? 1 : 2 + Math.floor(rnd() * 4),
    pageSize: pick([10, 20, 25, 50]),
  });
  const nameWords = (r: ClearanceRecord) => tokenize(r.deviceName).filter((w) => w.length >= 3 && !/^\d+$/.test(w));
  const withWords = records.filter((r) => nameWords(r).length > 0);
  const dated = records.filter((r) => r.decisionDate !== null);
  const years = (): [number, number] => {
    const y = Number(pick(dated).decisionDate!.slice(0, 4));
    const span = Math.floor(rnd() * 5);
    return [y - span, y];
  };
  const kinds: [string, number, () => SearchInput][] = [
    ['word', 25, () => ({ ...base(), query: pick(nameWords(pick(withWords))) })],
    ['prefix', 12, () => {
      const w = pick(nameWords(pick(withWords)));
      return { ...base(), query: w.slice(0, 3 + Math.floor(rnd() * Math.max(1, w.length - 3))) };
    }],
    ['two words', 12, () => {
      const ws = nameWords(pick(withWords));
      return { ...base(), query: `${pick(ws)} ${pick(ws)}` };
    }],
    ['applicant word', 6, () => {
      const r = pick(records.filter((x) => x.applicant));
      return { ...base(), query: tokenize(r.applicant!)[0] ?? 'inc' };
    }],
    ['k number', 4, () => {
      const k = pick(records).kNumber;
      return { ...base(), query: rnd() < 0.5 ? k : k.slice(0, 4) };
    }],
    ['product code text', 3, () => ({ ...base(), query: pick(records.filter((r) => r.productCode)).productCode!.toLowerCase() })],
    ['word + code', 6, () => {
      const r = pick(withWords.filter((x) => x.productCode));
      return { ...base(), query: pick(nameWords(r)), productCode: r.productCode };
    }],
    ['word + years', 7, () => {
      const [from, to] = years();
      return { ...base(), query: pick(nameWords(pick(withWords))), yearFrom: from, yearTo: to };
    }],
    ['filters only: code', 6, () => ({ ...base(), productCode: pick(records.filter((r) => r.productCode)).productCode })],
    ['filters only: applicant', 5, () => ({ ...base(), applicant: pick(records.filter((r) => r.applicant)).applicant })],
    ['filters only: years', 6, () => {
      const [from, to] = years();
      return { ...base(), yearFrom: rnd() < 0.8 ? from : null, yearTo: to };
    }],
    ['filters only: code + years', 4, () => {
      const [from, to] = years();
      return { ...base(), productCode: pick(records.filter((r) => r.productCode)).productCode, yearFrom: from, yearTo: to };
    }],
    ['empty', 4, () => base()],
  ];
  const weight = kinds.reduce((s, k) => s + k[1], 0);
  const out: Query[] = [];
  for (let i = 0; i < n; i++) {
    let x = rnd() * weight;
    const kind = kinds.find((k) => (x -= k[1]) < 0) ?? kinds[0]!;
    out.push({ kind: kind[0], input: kind[2]() });
  }
  return out;
}

/**
 * Queries that use the search extensions (qualifiers, exclusions, OR, phrases, sorts, facets, stats), drawn from the
 * snapshot's own records like `makeQueries`. Kept apart from it so that the contract's query mix stays comparable
 * across runs.
 */
export function makeExtendedQueries(records: ClearanceRecord[], n: number, seed: number): Query[] {
  const rnd = random(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const base = (): SearchInput => ({ query: '', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: pick([10, 25, 50]) });
  const nameWords = (r: ClearanceRecord) => tokenize(r.deviceName).filter((w) => w.length >= 3 && !/^\d+$/.test(w));
  const withWords = records.filter((r) => nameWords(r).length > 0);
  const withCode = records.filter((r) => r.productCode);
  const withApplicant = records.filter((r) => r.applicant && tokenize(r.applicant).length > 0);
  const dated = records.filter((r) => r.decisionDate !== null);
  const month = () => pick(dated).decisionDate!.slice(0, 7);
  const sorts = ['decisionDate:asc', 'receivedDate:desc', 'reviewDays:desc', 'kNumber:asc'] as const;
  const kinds: [string, () => SearchInput][] = [
    ['qualifier: class+panel+decided', () => ({ ...base(), query: `class:2 panel:${pick(['cardio', 'general', 'radiology', 'orthopedic'])} decided:${month()}..` })],
    ['qualifier: applicant prefix', () => ({ ...base(), query: `applicant:${tokenize(pick(withApplicant).applicant!)[0]!.slice(0, 4)}` })],
    ['qualifier: word -word', () => {
      const ws = nameWords(pick(withWords));
      return { ...base(), query: `${pick(ws)} -${pick(nameWords(pick(withWords)))}` };
    }],
    ['qualifier: OR codes', () => ({ ...base(), query: `code:${pick(withCode).productCode} OR code:${pick(withCode).productCode}` })],
    ['qualifier: phrase', () => {
      const ws = tokenize(pick(withWords).deviceName);
      const at = Math.floor(rnd() * Math.max(1, ws.length - 1));
      return { ...base(), query: `"${ws.slice(at, at + 2).join(' ')}"` };
    }],
    ['qualifier: flags+country', () => ({ ...base(), query: `thirdparty:${pick(['yes', 'no'])} ${pick(['-country:US', 'country:DE', 'summary:yes', 'expedited:no'])}` })],
    ['qualifier: reviewdays+received', () => ({ ...base(), query: `reviewdays:>${pick([90, 180, 365])} received:>=${month()}` })],
    ['sorted: everything', () => ({ ...base(), sort: pick(sorts) })],
    ['sorted: word', () => ({ ...base(), query: pick(nameWords(pick(withWords))), sort: pick(sorts) })],
    ['sorted: code', () => ({ ...base(), productCode: pick(withCode).productCode, sort: pick(sorts) })],
    ['facets+stats: code', () => ({ ...base(), query: `code:${pick(withCode).productCode}`, facets: [{ field: 'decisionYear', size: null, order: 'value' }, { field: 'deviceClass', size: 10, order: 'count' }], stats: true })],
  ];
  const out: Query[] = [];
  for (let i = 0; i < n; i++) {
    const kind = kinds[i % kinds.length]!;
    out.push({ kind: kind[0], input: kind[1]() });
  }
  return out;
}

/**
 * Qualifier and sorted queries that SQLite can say too (bench/lib/engine-sqlite.ts `sqlOfQuery`: columns compared,
 * OR, NOT, every sort), so that both engines answer them and their totals, facets and pages are compared. Kinds
 * start with `qualifier:` or `sorted:`, the groups the report gives p50 and p99 for.
 */
export function makeComparableQueries(records: ClearanceRecord[], n: number, seed: number): Query[] {
  const rnd = random(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const base = (): SearchInput => ({ query: '', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: rnd() < 0.8 ? 1 : 2 + Math.floor(rnd() * 4), pageSize: pick([10, 25, 50]) });
  const nameWords = (r: ClearanceRecord) => tokenize(r.deviceName).filter((w) => w.length >= 3 && !/^\d+$/.test(w));
  const withWords = records.filter((r) => nameWords(r).length > 0);
  const withCode = records.filter((r) => r.productCode);
  const dated = records.filter((r) => r.decisionDate !== null);
  const month = () => pick(dated).decisionDate!.slice(0, 7);
  const countries = [...new Set(records.map((r) => r.countryCode).filter((c): c is string => c !== null))].sort();
  const sorts = ['decisionDate:asc', 'receivedDate:desc', 'reviewDays:desc', 'kNumber:asc'] as const;
  const kinds: [string, () => SearchInput][] = [
    ['qualifier: class+panel+decided', () => ({ ...base(), query: `class:2 panel:${pick(['cardio', 'general', 'radiology', 'orthopedic'])} decided:${month()}..` })],
    ['qualifier: flags+country', () => ({ ...base(), query: `thirdparty:${pick(['yes', 'no'])} ${pick([`-country:${pick(countries) ?? 'US'}`, `country:${pick(countries) ?? 'DE'}`, 'summary:yes', 'expedited:no'])}` })],
    ['qualifier: reviewdays+received', () => ({ ...base(), query: `reviewdays:>${pick([90, 180, 365])} received:>=${month()}` })],
    ['qualifier: OR codes', () => ({ ...base(), query: `code:${pick(withCode).productCode} OR code:${pick(withCode).productCode}` })],
    ['qualifier: word+decided', () => ({ ...base(), query: `${pick(nameWords(pick(withWords)))} decided:${month().slice(0, 4)}` })],
    ['sorted: everything', () => ({ ...base(), sort: pick(sorts) })],
    ['sorted: word', () => ({ ...base(), query: pick(nameWords(pick(withWords))), sort: pick(sorts) })],
    ['sorted: code', () => ({ ...base(), productCode: pick(withCode).productCode, sort: pick(sorts) })],
    ['sorted: qualifier', () => ({ ...base(), query: `thirdparty:no received:>=${month()}`, sort: pick(sorts) })],
  ];
  const out: Query[] = [];
  for (let i = 0; i < n; i++) {
    const kind = kinds[i % kinds.length]!;
    out.push({ kind: kind[0], input: kind[1]() });
  }
  return out;
}
