import { ANY_EDGE_KIND, dayNumber, EDGE_KIND_BITS } from '../contract/search-index.ts';
import { applicantKey, foldText, tokenize } from './tokenize.ts';
import { QUALIFIER_NAMES, QUALIFIERS, type QualifierName } from './qualifiers.ts';

/**
 * The query language inside `search.query` (docs/search.md, "Qualifiers"), in the style of GitHub's and Gmail's
 * search boxes: words, `-word`, `"a phrase"`, `a OR b`, and `field:value`. A query made only of plain words means
 * what it always meant; everything else is an extension. Parsing needs no index, so input validation runs it too.
 */

/** Inclusive bounds; day numbers for dates (see src/contract/search-index.ts), days for review times. */
export type Range = { lo: number; hi: number };

export type Qualifier =
  | { field: 'applicant'; words: string[] }
  | { field: 'applicant'; exact: string }
  | { field: 'device'; words: string[]; phrase: boolean }
  | { field: 'code'; code: string }
  | { field: 'panel' | 'decision' | 'type'; text: string }
  | { field: 'class'; deviceClass: string }
  | { field: 'thirdparty' | 'expedited' | 'summary'; yes: boolean }
  | { field: 'country' | 'state'; code: string }
  | { field: 'decided' | 'received' | 'reviewdays'; range: Range }
  /** `kinds`: the edge kinds that count (EDGE_KIND_BITS OR-ed), all of them unless the query has a `kind:`. */
  | { field: 'predicate'; number: string; kinds: number }
  | { field: 'kind'; kinds: number };

export type Term = { negate: boolean } & (
  | { kind: 'words'; words: string[] }
  | { kind: 'phrase'; words: string[] }
  | { kind: 'field'; qualifier: Qualifier }
);

/** Terms joined by OR; a query is clauses joined by AND. */
export type Clause = Term[];

export type ParsedQuery = {
  clauses: Clause[];
  /** Only plain words: the query means what it meant before qualifiers existed. */
  plain: boolean;
  /** The edge kinds the `predicate:` terms and the `predicate` facet count: a `kind:`'s, else all (absent). */
  edgeKinds?: number;
};

export { QUALIFIER_NAMES, QUALIFIERS, type QualifierName } from './qualifiers.ts';

/** A query that breaks the grammar: the message names the part and the accepted forms. */
export class QueryError extends Error {
  override name = 'QueryError';
}

type Token = { negate: boolean; field: string | null; value: string; quoted: boolean; or: boolean };

/** Cuts the query into tokens: `-`, `field:`, a quoted string or a run of non-space characters, and bare `OR`. */
function lex(query: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const n = query.length;
  const space = (c: string | undefined) => c !== undefined && /\s/.test(c);
  while (i < n) {
    while (i < n && space(query[i])) i++;
    if (i >= n) break;
    let negate = false;
    if (query[i] === '-' && i + 1 < n && !space(query[i + 1])) {
      negate = true;
      i++;
    }
    let field: string | null = null;
    const m = /^([A-Za-z]+):/.exec(query.slice(i, i + 40));
    if (m) {
      field = m[1]!;
      i += m[0].length;
    }
    let value: string;
    let quoted = false;
    if (query[i] === '"') {
      const end = query.indexOf('"', i + 1);
      value = query.slice(i + 1, end < 0 ? n : end);
      i = end < 0 ? n : end + 1;
      quoted = true;
    } else {
      const start = i;
      while (i < n && !space(query[i])) i++;
      value = query.slice(start, i);
    }
    const or = !negate && field === null && !quoted && value === 'OR';
    tokens.push({ negate, field, value, quoted, or });
  }
  return tokens;
}

export function parseQuery(query: string): ParsedQuery {
  const tokens = lex(query);
  const clauses: Clause[] = [];
  let joinNext = false;
  for (let t = 0; t < tokens.length; t++) {
    const token = tokens[t]!;
    // OR between two terms joins them; anywhere else it is the word "or", as it always was.
    if (token.or && clauses.length > 0 && !joinNext && t + 1 < tokens.length && !tokens[t + 1]!.or) {
      joinNext = true;
      continue;
    }
    const term = termOf(token);
    if (term === null) continue;
    if (joinNext) clauses[clauses.length - 1]!.push(term);
    else clauses.push([term]);
    joinNext = false;
  }
  const plain = clauses.every((c) => c.length === 1 && c[0]!.kind === 'words' && !c[0]!.negate);
  const edgeKinds = kindOf(clauses);
  return edgeKinds === null ? { clauses, plain } : { clauses, plain, edgeKinds };
}

/**
 * The query's `kind:`, which narrows every `predicate:` term of the query (and the facet) to edges of that kind, and
 * stays a clause of its own. It is a setting of the whole query: one kind, not negated, not in an OR group.
 */
function kindOf(clauses: readonly Clause[]): number | null {
  let kinds: number | null = null;
  for (const clause of clauses) {
    for (const t of clause) {
      if (t.kind !== 'field' || t.qualifier.field !== 'kind') continue;
      if (t.negate || clause.length > 1) throw new QueryError('kind: narrows the whole query and cannot be negated or joined by OR; write kind:predicate or kind:named once.');
      if (kinds !== null && kinds !== t.qualifier.kinds) throw new QueryError('kind: is given twice with different values; a query has one kind: predicate or named.');
      kinds = t.qualifier.kinds;
    }
  }
  if (kinds === null) return null;
  for (const clause of clauses) for (const t of clause) if (t.kind === 'field' && t.qualifier.field === 'predicate') t.qualifier.kinds = kinds;
  return kinds;
}

function termOf(token: Token): Term | null {
  const { negate } = token;
  if (token.field === null) {
    const words = tokenize(token.value);
    if (words.length === 0) return null;
    return token.quoted ? { negate, kind: 'phrase', words } : { negate, kind: 'words', words };
  }
  const name = token.field.toLowerCase();
  if (!Object.hasOwn(QUALIFIERS, name)) {
    throw new QueryError(`"${token.field}:" is not a qualifier; the qualifiers are ${QUALIFIER_NAMES.map((q) => `${q}:`).join(', ')}.`);
  }
  return { negate, kind: 'field', qualifier: qualifierOf(name as QualifierName, token.value, token.quoted) };
}

function qualifierOf(field: QualifierName, raw: string, quoted: boolean): Qualifier {
  const value = raw.trim();
  const bad = (): never => {
    throw new QueryError(`${field}:${quoted ? `"${raw}"` : raw} is not a valid value; ${field}: takes ${QUALIFIERS[field]}.`);
  };
  if (value === '') bad();
  switch (field) {
    case 'applicant': {
      if (quoted) return { field, exact: applicantKey(value) };
      // The name loses its legal suffixes, the query keeps its words: applicant:co finds Cook, not every "Co.".
      const words = tokenize(value);
      return words.length === 0 ? bad() : { field, words };
    }
    case 'device': {
      const words = tokenize(value);
      return words.length === 0 ? bad() : { field, words, phrase: quoted };
    }
    case 'code':
      return /^[A-Za-z]{3}$/.test(value) ? { field, code: value.toUpperCase() } : bad();
    case 'country':
    case 'state':
      return /^[A-Za-z]{2}$/.test(value) ? { field, code: value.toUpperCase() } : bad();
    case 'panel':
    case 'decision':
    case 'type': {
      const text = foldText(value).replace(/\s+/g, ' ');
      return text === '' ? bad() : { field, text };
    }
    case 'class': {
      const c = CLASSES[value.toUpperCase()];
      return c === undefined ? bad() : { field, deviceClass: c };
    }
    case 'thirdparty':
    case 'expedited':
    case 'summary': {
      const v = value.toLowerCase();
      if (YES.includes(v)) return { field, yes: true };
      if (NO.includes(v)) return { field, yes: false };
      return bad();
    }
    case 'decided':
    case 'received':
      return { field, range: rangeOf(value, dateBounds) ?? bad() };
    case 'reviewdays':
      return { field, range: rangeOf(value, dayCount) ?? bad() };
    case 'predicate':
      return /^([Kk]|[Dd][Ee][Nn])\d{6}$/.test(value) ? { field, number: value.toUpperCase(), kinds: ANY_EDGE_KIND } : bad();
    case 'kind': {
      const v = value.toLowerCase();
      return v === 'predicate' || v === 'named' ? { field, kinds: EDGE_KIND_BITS[v] } : bad();
    }
  }
}

const YES = ['yes', 'y', 'true'];
const NO = ['no', 'n', 'false'];
/** FDA writes device classes 1, 2, 3, U (unclassified), N (not classified) and F (HDE; lower case in the file). */
const CLASSES: Record<string, string> = { '1': '1', '2': '2', '3': '3', I: '1', II: '2', III: '3', U: 'U', N: 'N', F: 'F' };

/** Legal forms dropped from company names before matching (docs/search.md). */
export const LEGAL_SUFFIXES: ReadonlySet<string> = new Set([
  'inc', 'incorporated', 'corp', 'corporation', 'co', 'company', 'ltd', 'limited', 'llc', 'llp', 'lp', 'plc',
  'gmbh', 'ag', 'kg', 'sa', 'sas', 'sarl', 'srl', 'spa', 'bv', 'nv', 'ab', 'oy', 'as', 'aps', 'pty', 'kk', 'pte',
]);


/** `A..B`, `..B`, `A..`, `>=A`, `>A`, `<=A`, `<A`, `=A` or `A`, each A or B read by `bounds` as an inclusive range. */
function rangeOf(value: string, bounds: (s: string) => Range | null): Range | null {
  const dots = value.indexOf('..');
  if (dots >= 0) {
    const a = value.slice(0, dots);
    const b = value.slice(dots + 2);
    if (a === '' && b === '') return null;
    const lo = a === '' ? -Infinity : bounds(a)?.lo;
    const hi = b === '' ? Infinity : bounds(b)?.hi;
    return lo === undefined || hi === undefined ? null : { lo, hi };
  }
  const m = /^(>=|<=|>|<|=)?(.+)$/.exec(value);
  if (!m) return null;
  const r = bounds(m[2]!);
  if (r === null) return null;
  switch (m[1]) {
    case '>=':
      return { lo: r.lo, hi: Infinity };
    case '>':
      return { lo: r.hi + 1, hi: Infinity };
    case '<=':
      return { lo: -Infinity, hi: r.hi };
    case '<':
      return { lo: -Infinity, hi: r.lo - 1 };
    default:
      return r;
  }
}

/** YYYY, YYYY-MM or YYYY-MM-DD as the day numbers of its first and last day. */
function dateBounds(s: string): Range | null {
  const m = /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$/.exec(s);
  if (!m) return null;
  const y = Number(m[1]);
  if (y < 1900) return null;
  const pad = (n: number) => String(n).padStart(2, '0');
  if (m[2] === undefined) return { lo: dayNumber(`${m[1]}-01-01`), hi: dayNumber(`${m[1]}-12-31`) };
  const month = Number(m[2]);
  if (month < 1 || month > 12) return null;
  const last = new Date(Date.UTC(y, month, 0)).getUTCDate();
  if (m[3] === undefined) return { lo: dayNumber(`${m[1]}-${m[2]}-01`), hi: dayNumber(`${m[1]}-${m[2]}-${pad(last)}`) };
  const day = Number(m[3]);
  if (day < 1 || day > last) return null;
  const d = dayNumber(`${m[1]}-${m[2]}-${m[3]}`);
  return { lo: d, hi: d };
}

function dayCount(s: string): Range | null {
  if (!/^-?\d{1,6}$/.test(s)) return null;
  const n = Number(s);
  return { lo: n, hi: n };
}
