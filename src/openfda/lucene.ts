/**
 * openFDA's `search` parameter: the subset of Lucene's query-string syntax that openFDA documents
 * (https://open.fda.gov/apis/query-syntax/), parsed into a tree. Parsing needs no data: which fields exist and what
 * their values mean is fields.ts's and plan.ts's business.
 *
 * - `field:term`, `field:"a phrase"`, `field:term*` (a trailing wildcard only), `field:(a b)` (the field applies to
 *   every term inside the parentheses);
 * - `field:[A TO B]`, `field:{A TO B}` (either bound may be `*`), and `field:>A`, `>=`, `<`, `<=`;
 * - `AND` (or `&&`), `OR` (or `||`), `NOT` (or a leading `-` or `!`), parentheses;
 * - clauses side by side (a space, or `+`, which a URL decodes to a space) are joined by OR, as openFDA's default
 *   operator is; AND binds tighter than OR; a clause marked NOT (`-`, `!`) among clauses joined by OR is taken out of
 *   what they match, as Lucene reads it (`a -b` is a without b), unless it stands in parentheses of its own;
 * - fuzzy `~`, proximity `"…"~N`, boosts `^` and regular expressions `/…/` are refused with a 400 saying so;
 * - `_exists_:field`, `_missing_:field`; a `.exact` suffix on a field name asks for whole values.
 * A term without a field is searched in the endpoint's default text fields (fields.ts).
 */

export type FieldRef = { name: string; exact: boolean };

export type Node =
  | { type: 'and' | 'or'; children: Node[] }
  | { type: 'not'; child: Node }
  | { type: 'all' }
  | { type: 'term'; field: FieldRef | null; value: string; prefix: boolean }
  | { type: 'phrase'; field: FieldRef | null; value: string }
  | { type: 'range'; field: FieldRef; lo: string | null; hi: string | null; loInclusive: boolean; hiInclusive: boolean }
  | { type: 'exists'; field: FieldRef; missing: boolean };

/** A `search` that breaks the syntax; the message names the place and the rule. */
export class SyntaxError extends Error {
  override name = 'SearchSyntaxError';
}

/** Bounds on a query's size, checked while parsing (the planner bounds what each clause costs). */
export const MAX_SEARCH_LENGTH = 4096;
export const MAX_DEPTH = 32;

type Tok =
  | { t: 'word'; v: string; at: number }
  | { t: 'quoted'; v: string; at: number }
  | { t: '(' | ')' | '[' | ']' | '{' | '}' | ':'; at: number };

const SPECIAL = new Set(['(', ')', '[', ']', '{', '}', ':', '"']);
const isSpace = (c: string) => c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '+';

function lex(s: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (isSpace(c)) {
      i++;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      let v = '';
      while (j < s.length && s[j] !== '"') {
        if (s[j] === '\\' && j + 1 < s.length) j++;
        v += s[j];
        j++;
      }
      if (j >= s.length) throw new SyntaxError(`search: the quote opened at character ${i + 1} is never closed`);
      out.push({ t: 'quoted', v, at: i });
      i = j + 1;
      continue;
    }
    if (SPECIAL.has(c)) {
      out.push({ t: c as '(' , at: i });
      i++;
      continue;
    }
    let j = i;
    let v = '';
    while (j < s.length && !isSpace(s[j]!) && !SPECIAL.has(s[j]!)) {
      if (s[j] === '\\' && j + 1 < s.length) j++;
      v += s[j];
      j++;
    }
    out.push({ t: 'word', v, at: i });
    i = j;
  }
  return out;
}

const FIELD_NAME = /^[A-Za-z_@][A-Za-z0-9_@]*(\.[A-Za-z0-9_@]+)*$/;

function fieldRef(raw: string, at: number): FieldRef {
  if (!FIELD_NAME.test(raw)) throw new SyntaxError(`search: "${raw}" (character ${at + 1}) is not a field name`);
  if (raw.endsWith('.exact')) return { name: raw.slice(0, -'.exact'.length), exact: true };
  return { name: raw, exact: false };
}

/** Parses a `search` value; the empty string (or only spaces) means every record. */
export function parseSearch(search: string): Node {
  if (search.length > MAX_SEARCH_LENGTH) throw new SyntaxError(`search must be at most ${MAX_SEARCH_LENGTH} characters`);
  const toks = lex(search);
  if (toks.length === 0) return { type: 'all' };
  let p = 0;
  const peek = (): Tok | undefined => toks[p];
  const isWord = (tok: Tok | undefined, ...words: string[]) => tok?.t === 'word' && words.includes(tok.v);
  const where = (tok: Tok | undefined) => (tok ? `character ${tok.at + 1}` : 'the end of the search');

  function orExpr(field: FieldRef | null, depth: number): Node {
    if (depth > MAX_DEPTH) throw new SyntaxError(`search: parentheses nest deeper than ${MAX_DEPTH}`);
    // Nothing to read: andExpr says what is missing.
    if (!peek() || peek()!.t === ')') return andExpr(field, depth);
    const parts: Node[] = [];
    const excluded: Node[] = [];
    for (;;) {
      const tok = peek();
      if (!tok || tok.t === ')') break;
      if (parts.length + excluded.length > 0 && isWord(tok, 'OR', '||')) {
        p++;
        if (!peek() || peek()!.t === ')') throw new SyntaxError(`search: OR at ${where(tok)} has nothing after it`);
      }
      const negated = startsNegated(peek());
      const part = andExpr(field, depth);
      // As Lucene reads a list of clauses joined by OR (or by nothing: openFDA's default operator): a clause marked
      // NOT, - or ! is prohibited, so its matches are taken out of what the others match, rather than OR'ed in. A
      // clause whose marks cancel out (`!!a`) is, likewise, required of what the others match.
      if (negated && marked) excluded.push(part);
      else parts.push(part);
    }
    if (excluded.length === 0) return parts.length === 1 ? parts[0]! : { type: 'or', children: parts };
    if (parts.length === 0) return excluded.length === 1 ? excluded[0]! : { type: 'and', children: excluded };
    return { type: 'and', children: [parts.length === 1 ? parts[0]! : { type: 'or', children: parts }, ...excluded] };
  }

  /** Whether the clause starting at `tok` is marked NOT, - or ! (not a parenthesized group holding a NOT). */
  function startsNegated(tok: Tok | undefined): boolean {
    return tok?.t === 'word' && (tok.v === 'NOT' || ((tok.v.startsWith('-') || tok.v.startsWith('!')) && tok.v.length > 1));
  }

  /** Whether the last andExpr read one clause, marked NOT, - or ! (some number of times). */
  let marked = false;

  function andExpr(field: FieldRef | null, depth: number): Node {
    const parts: Node[] = [unary(field, depth)];
    const firstMarked = marks > 0;
    while (isWord(peek(), 'AND', '&&')) {
      const tok = peek();
      p++;
      if (!peek() || peek()!.t === ')') throw new SyntaxError(`search: AND at ${where(tok)} has nothing after it`);
      parts.push(unary(field, depth));
    }
    marked = parts.length === 1 && firstMarked;
    return parts.length === 1 ? parts[0]! : { type: 'and', children: parts };
  }

  /** The NOT, - and ! marks before the clause unary read last. */
  let marks = 0;

  /**
   * A clause with the marks before it. A run of marks is counted, not nested: two cancel out (NOT NOT a is a, also
   * when the inner NOT stands in parentheses), so a stack of thousands is one clause or its negation, never a tree
   * that deep (whose every level would be a pass over the documents).
   */
  function unary(field: FieldRef | null, depth: number): Node {
    let n = 0;
    for (;;) {
      const tok = peek();
      if (isWord(tok, 'NOT')) {
        p++;
        if (!peek() || peek()!.t === ')') throw new SyntaxError(`search: NOT at ${where(tok)} has nothing after it`);
        n++;
        continue;
      }
      if (tok?.t === 'word' && (tok.v.startsWith('-') || tok.v.startsWith('!')) && tok.v.length > 1) {
        // `-term` and `!term` (and `!!-term`): the signs are taken off the word, all but its last character, and
        // the rest is read as a clause.
        let j = 0;
        while (j < tok.v.length - 1 && (tok.v[j] === '-' || tok.v[j] === '!')) j++;
        toks[p] = { t: 'word', v: tok.v.slice(j), at: tok.at + j };
        n += j;
        continue;
      }
      break;
    }
    const inner = primary(field, depth);
    marks = n;
    return n % 2 === 0 ? inner : negated(inner);
  }

  function primary(field: FieldRef | null, depth: number): Node {
    const tok = peek();
    if (!tok) throw new SyntaxError('search: a clause is missing at the end of the search');
    if (tok.t === '(') {
      p++;
      const inner = orExpr(field, depth + 1);
      if (peek()?.t !== ')') throw new SyntaxError(`search: the parenthesis opened at character ${tok.at + 1} is never closed`);
      p++;
      return inner;
    }
    if (tok.t === 'word' && toks[p + 1]?.t === ':') {
      if (field !== null) throw new SyntaxError(`search: "${tok.v}:" at ${where(tok)} is inside ${field.name}:( … ); a field cannot name another`);
      p += 2;
      if (tok.v === '_exists_' || tok.v === '_missing_') {
        const target = peek();
        p++;
        const name = target?.t === 'word' ? target.v : target?.t === 'quoted' ? target.v : null;
        if (name === null) throw new SyntaxError(`search: ${tok.v}: at ${where(tok)} needs a field name after it`);
        return { type: 'exists', field: fieldRef(name, target!.at), missing: tok.v === '_missing_' };
      }
      if (tok.v === '*' && isWord(peek(), '*')) {
        p++;
        return { type: 'all' };
      }
      return value(fieldRef(tok.v, tok.at), depth);
    }
    if (tok.t === 'word' || tok.t === 'quoted' || tok.t === '[' || tok.t === '{') return value(field, depth);
    throw new SyntaxError(`search: "${tok.t}" at ${where(tok)} is out of place`);
  }

  function value(field: FieldRef | null, depth: number): Node {
    const tok = peek();
    if (!tok) throw new SyntaxError(`search: ${field ? `${field.name}:` : 'a clause'} has no value at the end of the search`);
    if (tok.t === '(') {
      if (field === null) throw new SyntaxError(`search: unexpected "(" at ${where(tok)}`);
      p++;
      const inner = orExpr(field, depth + 1);
      if (peek()?.t !== ')') throw new SyntaxError(`search: the parenthesis opened at character ${tok.at + 1} is never closed`);
      p++;
      return inner;
    }
    if (tok.t === 'quoted') {
      p++;
      const after = peek();
      // `"a b"~2` is Lucene's proximity search, which openFDA refuses (its character set has no ~).
      if (after?.t === 'word' && after.at === tok.at + tok.v.length + 2 && after.v.startsWith('~')) {
        throw new SyntaxError(`search: "${tok.v}"${after.v} at ${where(tok)}: proximity search (~) is not supported; search the phrase, or its words joined by AND`);
      }
      return { type: 'phrase', field, value: tok.v };
    }
    if (tok.t === '[' || tok.t === '{') {
      if (field === null) throw new SyntaxError(`search: a range at ${where(tok)} needs a field (field:[A TO B])`);
      p++;
      const lo = peek();
      const to = toks[p + 1];
      const hi = toks[p + 2];
      const close = toks[p + 3];
      if (lo?.t !== 'word' || !isWord(to, 'TO') || hi?.t !== 'word' || (close?.t !== ']' && close?.t !== '}')) {
        throw new SyntaxError(`search: the range at ${where(tok)} must read ${field.name}:[A TO B] or {A TO B} (either bound may be *)`);
      }
      p += 4;
      return {
        type: 'range',
        field,
        lo: lo.v === '*' ? null : lo.v,
        hi: hi.v === '*' ? null : hi.v,
        loInclusive: tok.t === '[',
        hiInclusive: close.t === ']',
      };
    }
    if (tok.t !== 'word') throw new SyntaxError(`search: "${tok.t}" at ${where(tok)} is out of place`);
    p++;
    const cmp = /^(>=|<=|>|<)(.+)$/.exec(tok.v);
    if (cmp) {
      if (field === null) throw new SyntaxError(`search: "${tok.v}" at ${where(tok)} needs a field (field:${tok.v})`);
      const [, op, v] = cmp as unknown as [string, string, string];
      return op.startsWith('>')
        ? { type: 'range', field, lo: v, hi: null, loInclusive: op === '>=', hiInclusive: true }
        : { type: 'range', field, lo: null, hi: v, loInclusive: true, hiInclusive: op === '<=' };
    }
    // Lucene's fuzzy (~), boost (^) and regular expression (/…/) searches: refused rather than read as words.
    if (tok.v.includes('~')) throw new SyntaxError(`search: "${tok.v}" at ${where(tok)}: fuzzy search (~) is not supported; use a trailing * or list the spellings with OR`);
    if (tok.v.includes('^')) throw new SyntaxError(`search: "${tok.v}" at ${where(tok)}: a boost (^) is not supported; answers are not ranked by score`);
    if (tok.v.startsWith('/')) throw new SyntaxError(`search: "${tok.v}" at ${where(tok)}: a regular expression (/…/) is not supported; use a trailing * or OR`);
    const star = tok.v.indexOf('*');
    if (star >= 0 && star !== tok.v.length - 1) {
      throw new SyntaxError(`search: "${tok.v}" at ${where(tok)}: a wildcard * is allowed only at the end of a term`);
    }
    if (tok.v.includes('?')) throw new SyntaxError(`search: "${tok.v}" at ${where(tok)}: the ? wildcard is not supported; use a trailing *`);
    if (star >= 0) {
      const stem = tok.v.slice(0, -1);
      if (stem.length < 2) throw new SyntaxError(`search: "${tok.v}" at ${where(tok)}: a wildcard needs at least two characters before the *`);
      return { type: 'term', field, value: stem, prefix: true };
    }
    if (tok.v === 'AND' || tok.v === 'OR' || tok.v === 'NOT' || tok.v === 'TO') {
      throw new SyntaxError(`search: ${tok.v} at ${where(tok)} is out of place`);
    }
    return { type: 'term', field, value: tok.v, prefix: false };
  }

  const tree = orExpr(null, 0);
  if (p < toks.length) throw new SyntaxError(`search: "${toks[p]!.t === 'word' || toks[p]!.t === 'quoted' ? (toks[p] as { v: string }).v : toks[p]!.t}" at ${where(toks[p])} is out of place`);
  return tree;
}

/** The negation of a clause: NOT of a NOT is the clause itself. */
function negated(node: Node): Node {
  return node.type === 'not' ? node.child : { type: 'not', child: node };
}

/** Every field a tree names (for checking them against an endpoint's fields). */
export function fieldsOf(node: Node, out: FieldRef[] = []): FieldRef[] {
  switch (node.type) {
    case 'and':
    case 'or':
      for (const c of node.children) fieldsOf(c, out);
      break;
    case 'not':
      fieldsOf(node.child, out);
      break;
    case 'all':
      break;
    default:
      if (node.field) out.push(node.field);
  }
  return out;
}

/** The number of leaf clauses (the planner's bound on a query's size). */
export function clauseCount(node: Node): number {
  switch (node.type) {
    case 'and':
    case 'or':
      return node.children.reduce((n, c) => n + clauseCount(c), 0);
    case 'not':
      return clauseCount(node.child);
    default:
      return 1;
  }
}
