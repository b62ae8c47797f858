import type { ClearanceRecord } from '../../src/contract/index.ts';
import { dayNumber } from '../../src/contract/search-index.ts';
import { LEGAL_SUFFIXES, parseQuery, type Qualifier, type Term } from '../../src/search/grammar.ts';
import { foldText, tokenize } from '../../src/search/tokenize.ts';
import { passesFilters, sameApplicant } from './naive.ts';

/**
 * The extensions of search (qualifiers, phrases, OR, exclusions, sorts, facets, stats) as docs/search.md states
 * them, by a plain scan over every record. It shares the tokenizer and the query parser with the engine (the parser
 * needs no index: it only says what the query asks), and nothing else.
 */
export type NaiveExtendedRequest = {
  query: string;
  applicant: string | null;
  productCode: string | null;
  yearFrom: number | null;
  yearTo: number | null;
  sort?: string;
  facets?: { field: string; size: number | null; order: 'count' | 'value' }[];
  stats?: boolean;
};
export type NaiveFacetValue = { value: string | number | boolean; count: number; label?: string };
export type NaiveExtendedResult = {
  kNumbers: string[];
  facets: { field: string; values: NaiveFacetValue[] }[] | null;
  stats: unknown;
};

const folded = (s: string): string => foldText(s).replace(/\s+/g, ' ');
const cmp = (a: string | number, b: string | number): number => (a < b ? -1 : a > b ? 1 : 0);

/** Edges by device, as the edge files give them (one entry per source; the rule between sources applied). */
export type NaiveEdges = ReadonlyMap<string, readonly { to: string; kind: 'predicate' | 'named' }[]>;

type Context = {
  /** The query's kind: ("predicate" or "named"), read from the query here, or null for every kind. */
  kind: string | null;
  edges: NaiveEdges;
  deviceTypes: ReadonlyMap<string, string | null>;
  deviceClasses: ReadonlyMap<string, string | null>;
  /** Each decision code's most frequent description over every record (ties to the smallest). */
  decisionNames: Map<string, string>;
};

function decisionNamesOf(records: readonly ClearanceRecord[]): Map<string, string> {
  const counts = new Map<string, Map<string, number>>();
  for (const r of records) {
    if (r.decisionCode === null || r.decisionDescription === null) continue;
    const m = counts.get(r.decisionCode) ?? new Map<string, number>();
    m.set(r.decisionDescription, (m.get(r.decisionDescription) ?? 0) + 1);
    counts.set(r.decisionCode, m);
  }
  const out = new Map<string, string>();
  for (const [code, m] of counts) out.set(code, [...m].sort((a, b) => b[1] - a[1] || cmp(a[0], b[0]))[0]![0]);
  return out;
}

const summaryOf = (r: ClearanceRecord): boolean | null => {
  const v = r.statementOrSummary?.trim().toLowerCase();
  return v === 'summary' ? true : v === 'statement' ? false : null;
};

function qualifierPasses(r: ClearanceRecord, q: Qualifier, ctx: Context): boolean {
  const inRange = (v: number | null, range: { lo: number; hi: number }) => v !== null && v >= range.lo && v <= range.hi;
  switch (q.field) {
    case 'applicant': {
      if (r.applicant === null) return false;
      if ('exact' in q) return sameApplicant(r.applicant) === q.exact;
      const words = tokenize(r.applicant).filter((w) => !LEGAL_SUFFIXES.has(w));
      return q.words.every((w) => words.some((x) => x.startsWith(w)));
    }
    case 'device': {
      const words = tokenize(r.deviceName);
      return q.phrase ? hasPhrase(words, q.words) : q.words.every((w) => words.some((x) => x.startsWith(w)));
    }
    case 'code':
      return r.productCode === q.code;
    case 'panel':
      return r.advisoryCommittee !== null && folded(r.advisoryCommittee).startsWith(q.text);
    case 'type':
      return r.submissionType !== null && folded(r.submissionType).startsWith(q.text);
    case 'decision': {
      if (r.decisionCode === null) return false;
      const name = ctx.decisionNames.get(r.decisionCode) ?? r.decisionCode;
      return r.decisionCode.toLowerCase() === q.text || folded(name).startsWith(q.text);
    }
    case 'class': {
      const c = r.productCode === null ? null : (ctx.deviceClasses.get(r.productCode) ?? null);
      return c !== null && c.toUpperCase() === q.deviceClass;
    }
    case 'thirdparty':
      return r.thirdParty === q.yes;
    case 'expedited':
      return r.expeditedReview === q.yes;
    case 'summary':
      return summaryOf(r) === q.yes;
    case 'country':
      return r.countryCode === q.code;
    case 'state':
      return r.state === q.code;
    case 'decided':
      return inRange(r.decisionDate === null ? null : dayNumber(r.decisionDate), q.range);
    case 'received':
      return inRange(r.receivedDate === null ? null : dayNumber(r.receivedDate), q.range);
    case 'reviewdays':
      return inRange(r.reviewDays, q.range);
    case 'predicate':
      return edgesOf(r, ctx).some((e) => e.to === q.number);
    case 'kind':
      return edgesOf(r, ctx).length > 0;
  }
}

/** The record's edges of the query's kind (every kind without a kind:). */
function edgesOf(r: ClearanceRecord, ctx: Context): { to: string; kind: string }[] {
  return (ctx.edges.get(r.kNumber) ?? []).filter((e) => ctx.kind === null || e.kind === ctx.kind);
}

/** The query's kind: as written (the grammar refuses two different ones). */
function kindOfQuery(query: string): string | null {
  const m = /(?:^|\s)kind:"?([A-Za-z]+)/i.exec(query);
  return m ? m[1]!.toLowerCase() : null;
}

function hasPhrase(words: readonly string[], phrase: readonly string[]): boolean {
  for (let i = 0; i + phrase.length <= words.length; i++) if (phrase.every((p, k) => words[i + k] === p)) return true;
  return false;
}

/** Points of one word on a record (as test/search/naive.ts scores them), or null when it does not match. */
function wordPoints(r: ClearanceRecord, word: string, n: number, ctx: Context): number | null {
  const primary = [...tokenize(r.deviceName), r.kNumber.toLowerCase(), ...(r.productCode ? [r.productCode.toLowerCase()] : [])];
  const type = r.productCode === null ? null : (ctx.deviceTypes.get(r.productCode) ?? null);
  const secondary = [...tokenize(r.applicant ?? ''), ...tokenize(type ?? '')];
  if (primary.includes(word)) return n + 2;
  if (primary.some((p) => p.startsWith(word))) return n + 1;
  if (secondary.includes(word)) return 1;
  if (secondary.some((s) => s.startsWith(word))) return 0;
  return null;
}

/** Points of a term on a record, or null when it does not match. */
function termPoints(r: ClearanceRecord, t: Term, n: number, ctx: Context): number | null {
  let p: number | null;
  switch (t.kind) {
    case 'words': {
      let least: number | null = Infinity;
      for (const w of t.words) {
        const wp = wordPoints(r, w, n, ctx);
        if (wp === null) {
          least = null;
          break;
        }
        least = Math.min(least, wp);
      }
      p = least;
      break;
    }
    case 'phrase':
      p = hasPhrase(tokenize(r.deviceName), t.words) ? n + 2 : null;
      break;
    case 'field':
      p = qualifierPasses(r, t.qualifier, ctx) ? 0 : null;
      break;
  }
  if (t.negate) return p === null ? 0 : null;
  return p;
}

export function naiveExtended(
  records: readonly ClearanceRecord[],
  deviceTypes: ReadonlyMap<string, string | null>,
  deviceClasses: ReadonlyMap<string, string | null>,
  req: NaiveExtendedRequest,
  edges: NaiveEdges = new Map(),
): NaiveExtendedResult {
  const ctx: Context = { kind: kindOfQuery(req.query), edges, deviceTypes, deviceClasses, decisionNames: decisionNamesOf(records) };
  const parsed = parseQuery(req.query);
  // Plain positive words count once each; every other clause that can score is one unit.
  const words: string[] = [];
  const rest = [];
  for (const clause of parsed.clauses) {
    const only = clause.length === 1 ? clause[0]! : null;
    if (only && !only.negate && only.kind === 'words') for (const w of only.words) !words.includes(w) && words.push(w);
    else rest.push(clause);
  }
  const n = words.length + rest.filter((c) => c.some((t) => !t.negate && t.kind !== 'field')).length;

  const hits: { r: ClearanceRecord; score: number }[] = [];
  for (const r of records) {
    if (!passesFilters(r, req)) continue;
    let score = 0;
    let ok = true;
    for (const w of words) {
      const p = wordPoints(r, w, n, ctx);
      if (p === null) {
        ok = false;
        break;
      }
      score += p;
    }
    for (const clause of rest) {
      if (!ok) break;
      let best: number | null = null;
      for (const t of clause) {
        const p = termPoints(r, t, n, ctx);
        if (p !== null && (best === null || p > best)) best = p;
      }
      if (best === null) ok = false;
      else score += best;
    }
    if (ok) hits.push({ r, score });
  }
  const byDateDesc = (a: ClearanceRecord, b: ClearanceRecord) => nullLast(a.decisionDate, b.decisionDate, -1) || -cmp(a.kNumber, b.kNumber);
  const sort = req.sort ?? 'relevance';
  const order: Record<string, (a: { r: ClearanceRecord; score: number }, b: { r: ClearanceRecord; score: number }) => number> = {
    relevance: (a, b) => (n > 0 ? b.score - a.score : 0) || byDateDesc(a.r, b.r),
    'decisionDate:desc': (a, b) => byDateDesc(a.r, b.r),
    'decisionDate:asc': (a, b) => nullLast(a.r.decisionDate, b.r.decisionDate, 1) || cmp(a.r.kNumber, b.r.kNumber),
    'receivedDate:desc': (a, b) => nullLast(a.r.receivedDate, b.r.receivedDate, -1) || byDateDesc(a.r, b.r),
    'reviewDays:desc': (a, b) => nullLast(a.r.reviewDays, b.r.reviewDays, -1) || byDateDesc(a.r, b.r),
    'kNumber:asc': (a, b) => cmp(a.r.kNumber, b.r.kNumber),
  };
  hits.sort(order[sort]!);
  const matched = hits.map((h) => h.r);
  return {
    kNumbers: matched.map((r) => r.kNumber),
    facets: req.facets ? req.facets.map((f) => ({ field: f.field, values: facetValues(records, matched, f, ctx) })) : null,
    stats: req.stats ? naiveStats(matched) : undefined,
  };
}

/** `dir` 1 ascending, -1 descending; null after every value either way. */
function nullLast<V extends string | number>(a: V | null, b: V | null, dir: 1 | -1): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return dir * cmp(a, b);
}

function facetValues(
  all: readonly ClearanceRecord[],
  matched: readonly ClearanceRecord[],
  f: { field: string; size: number | null; order: 'count' | 'value' },
  ctx: Context,
): NaiveFacetValue[] {
  const spellings = new Map<string, Map<string, number>>();
  for (const r of all) {
    if (r.applicant === null) continue;
    const m = spellings.get(sameApplicant(r.applicant)) ?? new Map<string, number>();
    m.set(r.applicant, (m.get(r.applicant) ?? 0) + 1);
    spellings.set(sameApplicant(r.applicant), m);
  }
  const display = (a: string) => [...spellings.get(sameApplicant(a))!].sort((x, y) => y[1] - x[1] || cmp(x[0], y[0]))[0]![0];
  const valueOf = (r: ClearanceRecord): string | number | boolean | null => {
    switch (f.field) {
      case 'productCode':
        return r.productCode;
      case 'applicant':
        return r.applicant === null ? null : display(r.applicant);
      case 'decisionYear':
        return r.decisionDate === null ? null : Number(r.decisionDate.slice(0, 4));
      case 'receivedYear':
        return r.receivedDate === null ? null : Number(r.receivedDate.slice(0, 4));
      case 'decisionDate':
        return r.decisionDate;
      case 'receivedDate':
        return r.receivedDate;
      case 'advisoryCommittee':
        return r.advisoryCommittee;
      case 'deviceClass':
        return r.productCode === null ? null : (ctx.deviceClasses.get(r.productCode) ?? null);
      case 'decisionCode':
        return r.decisionCode;
      case 'submissionType':
        return r.submissionType;
      case 'thirdParty':
        return r.thirdParty;
      case 'expeditedReview':
        return r.expeditedReview;
      case 'statementOrSummary': {
        const s = summaryOf(r);
        return s === null ? null : s ? 'Summary' : 'Statement';
      }
      case 'countryCode':
        return r.countryCode;
      case 'state':
        return r.state;
    }
    throw new Error(`no such facet ${f.field}`);
  };
  const counts = new Map<string | number | boolean, number>();
  for (const r of matched) {
    if (f.field === 'predicate') {
      for (const to of new Set(edgesOf(r, ctx).map((e) => e.to))) counts.set(to, (counts.get(to) ?? 0) + 1);
      continue;
    }
    const v = valueOf(r);
    if (v !== null) counts.set(v, (counts.get(v) ?? 0) + 1);
  }
  const key = (v: string | number | boolean) => (typeof v === 'boolean' ? Number(v) : v);
  let entries = [...counts];
  entries.sort((a, b) => (f.order === 'count' ? b[1] - a[1] : 0) || cmp(key(a[0]), key(b[0])));
  if (f.size !== null) entries = entries.slice(0, f.size);
  return entries.map(([value, count]) => {
    const label =
      f.field === 'productCode' ? ctx.deviceTypes.get(value as string) || undefined : f.field === 'decisionCode' ? ctx.decisionNames.get(value as string) : undefined;
    return label === undefined ? { value, count } : { value, count, label };
  });
}

function naiveStats(matched: readonly ClearanceRecord[]) {
  const figures = (days: number[]) => {
    const s = [...days].sort((a, b) => a - b);
    const rank = (p: number) => s[Math.max(0, Math.ceil(p * s.length) - 1)]!;
    return { count: s.length, min: s[0]!, median: rank(0.5), p90: rank(0.9), max: s[s.length - 1]! };
  };
  const withDays = matched.filter((r) => r.reviewDays !== null && r.decisionDate !== null);
  if (withDays.length === 0) return { reviewDays: null };
  const years = [...new Set(withDays.map((r) => Number(r.decisionDate!.slice(0, 4))))].sort((a, b) => a - b);
  return {
    reviewDays: {
      ...figures(withDays.map((r) => r.reviewDays!)),
      byDecisionYear: years.map((year) => ({ year, ...figures(withDays.filter((r) => Number(r.decisionDate!.slice(0, 4)) === year).map((r) => r.reviewDays!)) })),
    },
  };
}
