import { createRequire } from 'node:module';
import { readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  LAYOUT,
  ShardIndex,
  type ClearanceRecord,
  type Facet,
  type ProductCodeEntry,
  type SearchInput,
} from '../../src/contract/index.ts';
import { dayNumber } from '../../src/contract/search-index.ts';
import { parseQuery, type ParsedQuery, type Qualifier } from '../../src/search/grammar.ts';
import { applicantKey, foldText, queryWords } from '../../src/search/tokenize.ts';
import type { SearchEngine } from './engine.ts';

/**
 * The baseline a team would otherwise pick: SQLite FTS5 through better-sqlite3. One FTS5 table holds the searchable
 * text (deviceName, applicant, kNumber, productCode and the code's device type) with the unicode61 tokenizer
 * (diacritics removed) and prefix indexes for `word*` queries; a plain table beside it holds the filter columns,
 * indexed. One statement per request computes the total, the three facets and the page over the same matches.
 * The columns the search extensions filter and sort on are there too (dates as day numbers, review time, committee,
 * class, country, state, flags), so that qualifier queries SQLite can say in SQL and every sort are compared as well.
 */

// better-sqlite3 ships no types; this is the part of its API used here.
type Statement = { all(params?: Record<string, unknown>): unknown[]; get(params?: Record<string, unknown>): unknown; run(params?: unknown): unknown };
type Database = {
  exec(sql: string): void;
  prepare(sql: string): Statement;
  transaction<A extends unknown[]>(fn: (...args: A) => void): (...args: A) => void;
  pragma(sql: string): unknown;
  close(): void;
};
type DatabaseConstructor = new (path: string, options?: { readonly?: boolean }) => Database;

/** better-sqlite3; throws when its native addon is missing (it is built at install time). */
export function loadSqlite(): DatabaseConstructor {
  return createRequire(import.meta.url)('better-sqlite3') as DatabaseConstructor;
}

/** "3.53.0 (better-sqlite3 12.9.0)": the versions measured. */
export function sqliteVersion(): string {
  const Sqlite = loadSqlite();
  const db = new Sqlite(':memory:');
  const { v } = db.prepare('SELECT sqlite_version() AS v').get() as { v: string };
  db.close();
  const { version } = createRequire(import.meta.url)('better-sqlite3/package.json') as { version: string };
  return `${v} (better-sqlite3 ${version})`;
}

const SCHEMA = `
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
CREATE TABLE docs (id INTEGER PRIMARY KEY, k TEXT NOT NULL, code TEXT, aid INTEGER, year INTEGER, date TEXT,
  dday INTEGER, rday INTEGER, review INTEGER, panel TEXT, class TEXT, country TEXT, state TEXT, tp INTEGER, ex INTEGER, summary INTEGER);
CREATE TABLE applicants (aid INTEGER PRIMARY KEY, akey TEXT NOT NULL UNIQUE, display TEXT NOT NULL);
CREATE VIRTUAL TABLE fts USING fts5(device_name, applicant, k_number, product_code, device_type,
  tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3');
`;
const INDEXES = `
CREATE INDEX docs_code ON docs (code);
CREATE INDEX docs_aid ON docs (aid);
CREATE INDEX docs_year ON docs (year);
CREATE INDEX docs_dday ON docs (dday);
CREATE INDEX docs_rday ON docs (rday);
CREATE INDEX docs_review ON docs (review);
CREATE INDEX docs_country ON docs (country);
INSERT INTO fts (fts) VALUES ('optimize');
ANALYZE;
`;

async function json(dir: string, path: string): Promise<unknown> {
  return JSON.parse(await readFile(join(dir, path), 'utf8'));
}

/**
 * Writes the database for one snapshot from its record and product-code shards. Applicant groups are made exactly as
 * the contract defines them (equal ignoring case and runs of spaces, shown by the most used spelling), so that the
 * applicant filter and facet mean the same thing on both sides.
 */
export async function buildSqlite(snapshotDir: string, path: string): Promise<void> {
  const Sqlite = loadSqlite();
  const temp = `${path}.partial`;
  await rm(temp, { force: true });
  const db = new Sqlite(temp);
  db.exec(SCHEMA);

  const deviceTypes = new Map<string, string | null>();
  const deviceClasses = new Map<string, string | null>();
  const codeIndex = ShardIndex.parse(await json(snapshotDir, LAYOUT.productCodeIndex));
  for (const shard of codeIndex.shards) {
    for (const entry of (await json(snapshotDir, shard.path)) as ProductCodeEntry[]) {
      deviceTypes.set(entry.productCode, entry.deviceType);
      deviceClasses.set(entry.productCode, entry.deviceClass?.toUpperCase() ?? null);
    }
  }

  // First pass: applicant groups and their most used spelling (ties: the smallest in code units).
  const recordIndex = ShardIndex.parse(await json(snapshotDir, LAYOUT.recordIndex));
  const spellings = new Map<string, Map<string, number>>();
  for (const shard of recordIndex.shards) {
    for (const r of (await json(snapshotDir, shard.path)) as ClearanceRecord[]) {
      if (r.applicant === null) continue;
      const key = applicantKey(r.applicant);
      let group = spellings.get(key);
      if (!group) spellings.set(key, (group = new Map()));
      group.set(r.applicant, (group.get(r.applicant) ?? 0) + 1);
    }
  }
  const aidOf = new Map<string, number>();
  const insertApplicant = db.prepare('INSERT INTO applicants (aid, akey, display) VALUES (?, ?, ?)');
  db.transaction(() => {
    for (const [key, group] of spellings) {
      let best = '';
      let count = 0;
      for (const [spelling, n] of group) if (n > count || (n === count && spelling < best)) [best, count] = [spelling, n];
      aidOf.set(key, aidOf.size + 1);
      insertApplicant.run([aidOf.size, key, best]);
    }
  })();

  const insertDoc = db.prepare(
    'INSERT INTO docs (id, k, code, aid, year, date, dday, rday, review, panel, class, country, state, tp, ex, summary) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const flag = (b: boolean | null) => (b === null ? null : Number(b));
  const insertText = db.prepare('INSERT INTO fts (rowid, device_name, applicant, k_number, product_code, device_type) VALUES (?, ?, ?, ?, ?, ?)');
  const insertShard = db.transaction((records: ClearanceRecord[], first: number) => {
    records.forEach((r, i) => {
      const id = first + i;
      const year = r.decisionDate === null ? null : Number(r.decisionDate.slice(0, 4));
      // Day numbers as the index keeps them: decision dates before 1900 have none (docs/contract.md section 4).
      const dday = year === null || year < 1900 ? null : dayNumber(r.decisionDate!);
      const rday = r.receivedDate === null || Number(r.receivedDate.slice(0, 4)) < 1900 ? null : dayNumber(r.receivedDate);
      const summary = r.statementOrSummary?.trim().toLowerCase();
      insertDoc.run([
        id, r.kNumber, r.productCode, r.applicant === null ? null : aidOf.get(applicantKey(r.applicant)), year, r.decisionDate,
        dday, rday, dday !== null && rday !== null ? dday - rday : null,
        r.advisoryCommittee === null ? null : foldText(r.advisoryCommittee).replace(/\s+/g, ' '),
        r.productCode === null ? null : (deviceClasses.get(r.productCode) ?? null),
        r.countryCode, r.state, flag(r.thirdParty), flag(r.expeditedReview),
        summary === 'summary' ? 1 : summary === 'statement' ? 0 : null,
      ]);
      const deviceType = r.productCode === null ? null : (deviceTypes.get(r.productCode) ?? null);
      insertText.run([id, r.deviceName, r.applicant, r.kNumber, r.productCode, deviceType]);
    });
  });
  let next = 1;
  for (const shard of recordIndex.shards) {
    const records = (await json(snapshotDir, shard.path)) as ClearanceRecord[];
    insertShard(records, next);
    next += records.length;
  }
  db.exec(INDEXES);
  db.close();
  await rename(temp, path);
}

type Row = { part: number; v: string | number | null; c: number | null };

/** The FTS5 query for the contract's matching: every word, each as a prefix (`"word"*`), all required. */
export function ftsQuery(words: readonly string[]): string {
  return words.map((w) => `"${w.replaceAll('"', '""')}"*`).join(' AND ');
}

/** ORDER BY of each sort, ties as docs/search.md gives them (relevance: bm25, since only totals and facets compare). */
const ORDER_BY: Record<string, string> = {
  relevance: 'score, date DESC NULLS LAST, k DESC',
  'decisionDate:desc': 'date DESC NULLS LAST, k DESC',
  'decisionDate:asc': 'date ASC NULLS LAST, k ASC',
  'receivedDate:desc': 'rday DESC NULLS LAST, date DESC NULLS LAST, k DESC',
  'reviewDays:desc': 'review DESC NULLS LAST, date DESC NULLS LAST, k DESC',
  'kNumber:asc': 'k ASC',
};

/** The statement for one shape of request (which filters are present, the qualifiers' SQL, the sort). */
function statementSql(text: boolean, code: boolean, applicant: boolean, yearFrom: boolean, yearTo: boolean, qualifiers: readonly string[], sort: string): string {
  const where = [
    code ? 'd.code = $code' : null,
    applicant ? 'd.aid = $aid' : null,
    yearFrom ? 'd.year >= $yearFrom' : null,
    yearTo ? 'd.year <= $yearTo' : null,
    ...qualifiers,
  ].filter((x) => x !== null);
  const columns = 'd.k, d.code, d.aid, d.year, d.date, d.rday, d.review';
  const source = text
    ? `SELECT ${columns}, bm25(fts) AS score FROM fts JOIN docs d ON d.id = fts.rowid
       WHERE fts MATCH $match${where.map((w) => ` AND ${w}`).join('')}`
    : `SELECT ${columns}, 0 AS score FROM docs d${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`;
  return `WITH m AS MATERIALIZED (${source})
SELECT 0 AS part, NULL AS v, count(*) AS c FROM m
UNION ALL SELECT * FROM (SELECT 1, code, count(*) AS c FROM m WHERE code IS NOT NULL GROUP BY code ORDER BY c DESC, code LIMIT 10)
UNION ALL SELECT * FROM (SELECT 2, a.display, t.c FROM (SELECT aid, count(*) AS c FROM m WHERE aid IS NOT NULL GROUP BY aid) t
  JOIN applicants a ON a.aid = t.aid ORDER BY t.c DESC, a.display LIMIT 10)
UNION ALL SELECT * FROM (SELECT 3, year, count(*) AS c FROM m WHERE year IS NOT NULL GROUP BY year ORDER BY c DESC, year LIMIT 10)
UNION ALL SELECT * FROM (SELECT 4, k, NULL FROM m ORDER BY ${ORDER_BY[sort]} LIMIT $limit OFFSET $offset)`;
}

/** A qualifier SQLite can say here (a column compared), or null. */
function qualifierPredicate(q: Qualifier, param: (value: unknown) => string): string | null {
  const within = (column: string, range: { lo: number; hi: number }) =>
    `d.${column} BETWEEN ${param(Math.max(range.lo, -1e9))} AND ${param(Math.min(range.hi, 1e9))}`;
  switch (q.field) {
    case 'code':
      return `d.code = ${param(q.code)}`;
    case 'country':
    case 'state':
      return `d.${q.field} = ${param(q.code)}`;
    case 'class':
      return `d.class = ${param(q.deviceClass)}`;
    case 'panel':
      return `substr(d.panel, 1, ${q.text.length}) = ${param(q.text)}`;
    case 'thirdparty':
    case 'expedited':
    case 'summary':
      return `d.${q.field === 'thirdparty' ? 'tp' : q.field === 'expedited' ? 'ex' : 'summary'} = ${param(Number(q.yes))}`;
    case 'decided':
      return within('dday', q.range);
    case 'received':
      return within('rday', q.range);
    case 'reviewdays':
      return within('review', q.range);
    default:
      return null;
  }
}

/**
 * A parsed query as FTS words and SQL conditions: positive plain words go to FTS5, each other clause must be
 * qualifiers SQLite can say (OR within a clause, `-` as NOT; a record without the value fails a qualifier, so its
 * negation keeps it). Null when the query holds anything else (phrases, exclusions of words, device:, applicant:, …).
 */
export function sqlOfQuery(parsed: ParsedQuery, params: Record<string, unknown>): { words: string[]; where: string[] } | null {
  const words: string[] = [];
  const where: string[] = [];
  const param = (value: unknown) => {
    const name = `q${Object.keys(params).length}`;
    params[name] = value;
    return `$${name}`;
  };
  for (const clause of parsed.clauses) {
    const only = clause.length === 1 ? clause[0]! : null;
    if (only && only.kind === 'words' && !only.negate) {
      for (const w of only.words) if (!words.includes(w)) words.push(w);
      continue;
    }
    const terms: string[] = [];
    for (const term of clause) {
      if (term.kind !== 'field') return null;
      const p = qualifierPredicate(term.qualifier, param);
      if (p === null) return null;
      terms.push(term.negate ? `NOT coalesce(${p}, 0)` : `coalesce(${p}, 0)`);
    }
    where.push(`(${terms.join(' OR ')})`);
  }
  return { words, where };
}

export function openSqlite(path: string): SearchEngine {
  const Sqlite = loadSqlite();
  const db = new Sqlite(path, { readonly: true });
  // Enough page cache to hold the whole 1,000,000-record index: the baseline runs from memory, as ours does.
  db.pragma('cache_size = -1048576');
  db.pragma('mmap_size = 4294967296');
  const statements = new Map<string, Statement>();
  const findApplicant = db.prepare('SELECT aid FROM applicants WHERE akey = $akey');
  return {
    run(input: SearchInput) {
      const params: Record<string, unknown> = {};
      const parsed = parseQuery(input.query);
      const said = parsed.plain ? { words: queryWords(input.query), where: [] } : sqlOfQuery(parsed, params);
      if (said === null) throw new Error(`SQLite cannot say the query ${JSON.stringify(input.query)} here`);
      const { words } = said;
      const shape = [words.length > 0, input.productCode !== null, input.applicant !== null, input.yearFrom !== null, input.yearTo !== null] as const;
      const sql = statementSql(...shape, said.where, input.sort ?? 'relevance');
      let statement = statements.get(sql);
      if (!statement) statements.set(sql, (statement = db.prepare(sql)));
      params.limit = input.pageSize;
      params.offset = (input.page - 1) * input.pageSize;
      if (words.length > 0) params.match = ftsQuery(words);
      if (input.productCode !== null) params.code = input.productCode;
      if (input.applicant !== null) {
        const found = findApplicant.get({ akey: applicantKey(input.applicant) }) as { aid: number } | undefined;
        params.aid = found?.aid ?? -1;
      }
      if (input.yearFrom !== null) params.yearFrom = input.yearFrom;
      if (input.yearTo !== null) params.yearTo = input.yearTo;
      const rows = statement.all(params) as Row[];
      const facets: Facet[] = [
        { field: 'productCode', values: [] },
        { field: 'applicant', values: [] },
        { field: 'decisionYear', values: [] },
      ];
      let total = 0;
      const kNumbers: string[] = [];
      for (const row of rows) {
        if (row.part === 0) total = row.c ?? 0;
        else if (row.part === 4) kNumbers.push(String(row.v));
        else (facets[row.part - 1]!.values as { value: string | number; count: number }[]).push({ value: row.v!, count: row.c! });
      }
      return { total, facets, kNumbers };
    },
    close: () => db.close(),
  };
}
