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
import { applicantKey, queryWords } from '../../src/search/tokenize.ts';
import type { SearchEngine } from './engine.ts';

/**
 * The baseline a team would otherwise pick: SQLite FTS5 through better-sqlite3. One FTS5 table holds the searchable
 * text (deviceName, applicant, kNumber, productCode and the code's device type) with the unicode61 tokenizer
 * (diacritics removed) and prefix indexes for `word*` queries; a plain table beside it holds the filter columns,
 * indexed. One statement per request computes the total, the three facets and the page over the same matches.
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
CREATE TABLE docs (id INTEGER PRIMARY KEY, k TEXT NOT NULL, code TEXT, aid INTEGER, year INTEGER, date TEXT);
CREATE TABLE applicants (aid INTEGER PRIMARY KEY, akey TEXT NOT NULL UNIQUE, display TEXT NOT NULL);
CREATE VIRTUAL TABLE fts USING fts5(device_name, applicant, k_number, product_code, device_type,
  tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3');
`;
const INDEXES = `
CREATE INDEX docs_code ON docs (code);
CREATE INDEX docs_aid ON docs (aid);
CREATE INDEX docs_year ON docs (year);
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
  const codeIndex = ShardIndex.parse(await json(snapshotDir, LAYOUT.productCodeIndex));
  for (const shard of codeIndex.shards) {
    for (const entry of (await json(snapshotDir, shard.path)) as ProductCodeEntry[]) deviceTypes.set(entry.productCode, entry.deviceType);
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

  const insertDoc = db.prepare('INSERT INTO docs (id, k, code, aid, year, date) VALUES (?, ?, ?, ?, ?, ?)');
  const insertText = db.prepare('INSERT INTO fts (rowid, device_name, applicant, k_number, product_code, device_type) VALUES (?, ?, ?, ?, ?, ?)');
  const insertShard = db.transaction((records: ClearanceRecord[], first: number) => {
    records.forEach((r, i) => {
      const id = first + i;
      const year = r.decisionDate === null ? null : Number(r.decisionDate.slice(0, 4));
      insertDoc.run([id, r.kNumber, r.productCode, r.applicant === null ? null : aidOf.get(applicantKey(r.applicant)), year, r.decisionDate]);
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

/** The statement for one shape of request (which filters are present); built once per shape and kept. */
function statementSql(text: boolean, code: boolean, applicant: boolean, yearFrom: boolean, yearTo: boolean): string {
  const where = [
    code ? 'd.code = $code' : null,
    applicant ? 'd.aid = $aid' : null,
    yearFrom ? 'd.year >= $yearFrom' : null,
    yearTo ? 'd.year <= $yearTo' : null,
  ].filter((x) => x !== null);
  const source = text
    ? `SELECT d.k, d.code, d.aid, d.year, d.date, bm25(fts) AS score FROM fts JOIN docs d ON d.id = fts.rowid
       WHERE fts MATCH $match${where.map((w) => ` AND ${w}`).join('')}`
    : `SELECT d.k, d.code, d.aid, d.year, d.date, 0 AS score FROM docs d${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`;
  return `WITH m AS MATERIALIZED (${source})
SELECT 0 AS part, NULL AS v, count(*) AS c FROM m
UNION ALL SELECT * FROM (SELECT 1, code, count(*) AS c FROM m WHERE code IS NOT NULL GROUP BY code ORDER BY c DESC, code LIMIT 10)
UNION ALL SELECT * FROM (SELECT 2, a.display, t.c FROM (SELECT aid, count(*) AS c FROM m WHERE aid IS NOT NULL GROUP BY aid) t
  JOIN applicants a ON a.aid = t.aid ORDER BY t.c DESC, a.display LIMIT 10)
UNION ALL SELECT * FROM (SELECT 3, year, count(*) AS c FROM m WHERE year IS NOT NULL GROUP BY year ORDER BY c DESC, year LIMIT 10)
UNION ALL SELECT * FROM (SELECT 4, k, NULL FROM m ORDER BY score, date DESC NULLS LAST, k DESC LIMIT $limit OFFSET $offset)`;
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
      const words = queryWords(input.query);
      const shape = [words.length > 0, input.productCode !== null, input.applicant !== null, input.yearFrom !== null, input.yearTo !== null] as const;
      const key = shape.map(Number).join('');
      let statement = statements.get(key);
      if (!statement) statements.set(key, (statement = db.prepare(statementSql(...shape))));
      const params: Record<string, unknown> = { limit: input.pageSize, offset: (input.page - 1) * input.pageSize };
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
