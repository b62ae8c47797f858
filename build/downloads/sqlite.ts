import { createRequire } from 'node:module';
import { rm } from 'node:fs/promises';
import { sourceRefFor, type ClearanceRecord } from '../../src/contract/index.ts';
import { COLUMNS, type Column } from './columns.ts';

/**
 * The whole table of clearances as one SQLite database that `sqlite3` and Datasette open as it is:
 *
 * - `clearances`: one row a record, K number ascending (rowid 1, 2, … in that order), a column per record member named
 *   as the member, in a STRICT table so that every value of a column has its one type: text as TEXT, dates as ISO
 *   `YYYY-MM-DD` TEXT, flags as INTEGER 0 or 1 (SQLite has no boolean), `reviewDays` as INTEGER, `source` as its
 *   JSON text. `id`, `title`, `evidenceStatus` and `source` are generated from the other columns (below).
 *   `kNumber` is the primary key; `productCode` and `decisionDate` are indexed.
 * - `clearances_fts`: an FTS5 index of `deviceName`, `applicant`, `productCode` and `kNumber` over the table's
 *   rows (external content, so the text is stored once); Datasette finds it by its name and offers a search box.
 *
 * Deterministic: the same rows inserted in the same order by the same SQLite give the same pages; there is no time in
 * the file. The rowids are implicit, so the file is never VACUUMed (which may renumber them and so unlink the index);
 * auto-vacuum drops the pages FTS5's merge frees instead.
 */
export const SQLITE_TABLE = 'clearances';
export const SQLITE_FTS_TABLE = 'clearances_fts';
export const FTS_COLUMNS = ['deviceName', 'applicant', 'productCode', 'kNumber'] as const;

/** The part of better-sqlite3's and node:sqlite's APIs used here: the two agree on it. */
type Statement = { run(...params: unknown[]): unknown };
type Database = { exec(sql: string): unknown; prepare(sql: string): Statement; close(): unknown };

const require = createRequire(import.meta.url);

/**
 * Opens `file` with better-sqlite3. Its addon is built for the Node that installed it; under another Node major it
 * does not load, and Node's own `node:sqlite` (22.5 and later) is used instead, so a build never depends on which
 * Node ran `npm ci`.
 */
function open(file: string): Database {
  let failure: unknown;
  try {
    const BetterSqlite3 = require('better-sqlite3') as new (file: string) => Database;
    return new BetterSqlite3(file);
  } catch (err) {
    failure = err;
  }
  try {
    const { DatabaseSync } = require('node:sqlite') as { DatabaseSync: new (file: string) => Database };
    return new DatabaseSync(file);
  } catch {
    const reason = failure instanceof Error ? failure.message.split('\n')[0] : String(failure);
    throw new Error(`the SQLite download needs better-sqlite3, which did not load (${reason}); run \`npm rebuild better-sqlite3\` (python3, make and a C++ compiler), or use Node 22.5 or later`);
  }
}

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;

const literal = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/**
 * Members the record derives from others, as SQLite generated columns: computed when read (SELECT * lists them), so
 * the file does not store the same text again (about 300 bytes a record, most of it `source`).
 */
function derivedSql(name: Column['name']): string | null {
  if (name === 'id') return '"kNumber"';
  if (name === 'title') return '"deviceName"';
  if (name === 'evidenceStatus') return literal('available');
  if (name !== 'source') return null;
  const k = 'K000000';
  const ref = sourceRefFor(k);
  const members = Object.entries(ref).map(([member, value]) => {
    const text = typeof value !== 'string' ? String(value) : value === k ? '"kNumber"' : value.endsWith(k) ? `${literal(value.slice(0, -k.length))} || "kNumber"` : literal(value);
    return `${literal(member)}, ${text}`;
  });
  return `json_object(${members.join(', ')})`;
}

/** The columns stored (and so inserted): every column but the generated ones. */
const STORED = COLUMNS.filter((c) => derivedSql(c.name) === null);

function columnSql(c: Column): string {
  const name = quote(c.name);
  const derived = derivedSql(c.name);
  if (derived !== null) return `${name} TEXT NOT NULL GENERATED ALWAYS AS (${derived}) VIRTUAL`;
  const type = c.kind === 'flag' || c.kind === 'int' ? 'INTEGER' : 'TEXT';
  const checks: string[] = [];
  if (c.kind === 'flag') checks.push(`${name} IN (0, 1)`);
  if (c.kind === 'date') checks.push(`${name} GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'`);
  if (c.kind === 'source') checks.push(`json_valid(${name})`);
  const check = checks.length ? ` CHECK (${checks.join(' AND ')})` : '';
  return `${name} ${type}${c.required ? ' NOT NULL' : ''}${c.name === 'kNumber' ? ' PRIMARY KEY' : ''}${check}`;
}

export function sqliteSchema(): string[] {
  const t = quote(SQLITE_TABLE);
  return [
    `CREATE TABLE ${t} (\n  ${COLUMNS.map(columnSql).join(',\n  ')}\n) STRICT`,
    `CREATE INDEX ${quote(`${SQLITE_TABLE}_productCode`)} ON ${t} ("productCode")`,
    `CREATE INDEX ${quote(`${SQLITE_TABLE}_decisionDate`)} ON ${t} ("decisionDate")`,
    `CREATE VIRTUAL TABLE ${quote(SQLITE_FTS_TABLE)} USING fts5(${FTS_COLUMNS.map(quote).join(', ')}, content=${quote(SQLITE_TABLE)}, content_rowid='rowid', tokenize='unicode61 remove_diacritics 2')`,
  ];
}

function valueOf(c: Column, r: ClearanceRecord): unknown {
  const v = r[c.name];
  if (c.kind === 'flag') return v === null ? null : v ? 1 : 0;
  return v;
}

/** Writes `records` to `file` (replaced if present) as a SQLite database, in one transaction. */
export async function writeSqlite(records: readonly ClearanceRecord[], file: string): Promise<void> {
  await rm(file, { force: true });
  const db = open(file);
  try {
    // Settings that shape the file come first: page size and auto-vacuum are fixed when the first table is made.
    db.exec('PRAGMA page_size = 4096; PRAGMA auto_vacuum = FULL; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;');
    db.exec('BEGIN');
    for (const sql of sqliteSchema()) db.exec(sql);
    const insert = db.prepare(`INSERT INTO ${quote(SQLITE_TABLE)} (${STORED.map((c) => quote(c.name)).join(', ')}) VALUES (${STORED.map(() => '?').join(', ')})`);
    for (const r of records) insert.run(...STORED.map((c) => valueOf(c, r)));
    const fts = quote(SQLITE_FTS_TABLE);
    db.exec(`INSERT INTO ${fts}(${fts}) VALUES ('rebuild')`);
    db.exec(`INSERT INTO ${fts}(${fts}) VALUES ('optimize')`);
    db.exec('COMMIT');
  } finally {
    db.close();
  }
}
