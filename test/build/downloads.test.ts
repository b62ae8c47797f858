import { execFileSync } from 'node:child_process';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClearanceRecord, LAYOUT, Manifest, MetaData, ShardIndex } from '../../src/contract/index.ts';
import { writeParquet } from '../../build/downloads/parquet.ts';
import { writeSqlite } from '../../build/downloads/sqlite.ts';
import { prepareAssets } from '../../build/worker/assets.ts';
import { buildFixture } from '../helpers/fixture-snapshot.ts';
import { makeRecord } from '../helpers/records.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * The bulk downloads, read back by readers that share no code with their writers: DuckDB for the Parquet file, the
 * `sqlite3` command for the database. Each row must equal its record as the snapshot's record shards hold it.
 */

const RECORD_MEMBERS = Object.keys(ClearanceRecord.shape);

/** Every record of a snapshot, read from its shards (not from the build's memory), K number ascending. */
async function recordsOf(dir: string): Promise<ClearanceRecord[]> {
  const index = ShardIndex.parse(JSON.parse(await readFile(join(dir, LAYOUT.recordIndex), 'utf8')));
  const out: ClearanceRecord[] = [];
  for (const shard of index.shards) out.push(...ClearanceRecord.array().parse(JSON.parse(await readFile(join(dir, shard.path), 'utf8'))));
  return out;
}

let duck: Awaited<ReturnType<Awaited<ReturnType<typeof DuckDBInstance.create>>['connect']>>;
async function duckRows(sql: string): Promise<Record<string, unknown>[]> {
  return (await duck.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
}
const sqlString = (s: string): string => `'${s.replace(/'/g, "''")}'`;

/** The rows of a Parquet file in file order, as DuckDB reads them (dates as YYYY-MM-DD, structs as objects). */
const parquetRows = (file: string) => duckRows(`SELECT * FROM read_parquet(${sqlString(file)})`);

/** The `sqlite3` command's answer to `sql` over `file`, opened read-only, as JSON rows. */
function sqlite3(file: string, sql: string): Record<string, unknown>[] {
  let out: string;
  try {
    out = execFileSync('sqlite3', ['-readonly', '-json', file, sql], { encoding: 'utf8', maxBuffer: 1 << 30 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new Error('these tests need the sqlite3 command (Debian package sqlite3; .ci/browser-deps.sh installs it)');
    throw err;
  }
  return out.trim() === '' ? [] : (JSON.parse(out) as Record<string, unknown>[]);
}

/** A row of the SQLite table as the record it stands for: flags from 0 and 1, `source` from its JSON text. */
function recordFromSqlite(row: Record<string, unknown>): Record<string, unknown> {
  const flag = (v: unknown) => (v === null ? null : v === 1 ? true : v === 0 ? false : `not a flag: ${String(v)}`);
  return { ...row, thirdParty: flag(row.thirdParty), expeditedReview: flag(row.expeditedReview), source: JSON.parse(String(row.source)) };
}

/** Each row equals its record, member for member and in the record's order. */
function expectRowsAreRecords(rows: Record<string, unknown>[], records: readonly ClearanceRecord[]): void {
  expect(rows).toHaveLength(records.length);
  for (const [i, row] of rows.entries()) {
    expect(Object.keys(row)).toEqual(RECORD_MEMBERS);
    expect(row).toEqual(records[i]);
  }
}

let build: Awaited<ReturnType<typeof buildFixture>>;
let records: ClearanceRecord[];
let scratch: string;

beforeAll(async () => {
  duck = await (await DuckDBInstance.create(':memory:')).connect();
  build = await buildFixture();
  records = await recordsOf(build.dir);
  scratch = await testTempDir('device-510k-downloads-');
}, 120_000);

afterAll(async () => {
  duck?.closeSync();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('the Parquet download', () => {
  it('has every record as a row, K number ascending, each equal to its record (read by DuckDB)', async () => {
    expect(records.length).toBeGreaterThan(100);
    expectRowsAreRecords(await parquetRows(join(build.dir, LAYOUT.downloadsParquet)), records);
  });

  it('types each column once: dates as DATE, flags as BOOLEAN, reviewDays as INTEGER, source as a struct, text as VARCHAR', async () => {
    const types = Object.fromEntries(
      (await duckRows(`DESCRIBE SELECT * FROM read_parquet(${sqlString(join(build.dir, LAYOUT.downloadsParquet))})`)).map((r) => [r.column_name, r.column_type]),
    );
    expect(Object.keys(types)).toEqual(RECORD_MEMBERS);
    const special: Record<string, string> = { decisionDate: 'DATE', receivedDate: 'DATE', thirdParty: 'BOOLEAN', expeditedReview: 'BOOLEAN', reviewDays: 'INTEGER' };
    for (const [name, type] of Object.entries(types)) {
      if (name === 'source') expect(type).toBe('STRUCT(schemaVersion INTEGER, sourceId VARCHAR, collection VARCHAR, recordId VARCHAR, textOrigin VARCHAR, sourceUrl VARCHAR)');
      else expect([name, type]).toEqual([name, special[name] ?? 'VARCHAR']);
    }
    // The file's own schema: the DATE and STRING logical types, not only DuckDB's reading of them.
    const schema = await duckRows(`SELECT name, type, logical_type FROM parquet_schema(${sqlString(join(build.dir, LAYOUT.downloadsParquet))})`);
    expect(schema.find((r) => r.name === 'decisionDate')).toEqual({ name: 'decisionDate', type: 'INT32', logical_type: 'DateType()' });
    expect(schema.find((r) => r.name === 'thirdParty')).toEqual({ name: 'thirdParty', type: 'BOOLEAN', logical_type: null });
    expect(schema.find((r) => r.name === 'deviceName')).toEqual({ name: 'deviceName', type: 'BYTE_ARRAY', logical_type: 'StringType()' });
  });

  it('cuts rows into row groups of the size asked, compressed with Snappy, with statistics a reader can skip by', async () => {
    const some = records.slice(0, 10);
    const file = join(scratch, 'groups.parquet');
    writeParquet(some, file, 3);
    expectRowsAreRecords(await parquetRows(file), some);
    const meta = await duckRows(`SELECT row_group_id, row_group_num_rows, compression, path_in_schema, stats_min_value, stats_max_value FROM parquet_metadata(${sqlString(file)}) WHERE path_in_schema = 'kNumber' ORDER BY row_group_id`);
    expect(meta.map((m) => Number(m.row_group_num_rows))).toEqual([3, 3, 3, 1]);
    expect(new Set(meta.map((m) => m.compression))).toEqual(new Set(['SNAPPY']));
    expect(meta.map((m) => [m.stats_min_value, m.stats_max_value])).toEqual([0, 3, 6, 9].map((i) => [some[i]?.kNumber, some[Math.min(i + 2, 9)]?.kNumber]));
    expect(() => writeParquet(some, file, 0)).toThrow(/groupRows must be a whole number from 1 up, got 0/);
  });
});

describe('the SQLite download', () => {
  const db = () => join(build.dir, LAYOUT.downloadsSqlite);

  it('has every record as a row of clearances, rowid in K number order, each equal to its record (read by sqlite3)', () => {
    expectRowsAreRecords(sqlite3(db(), 'SELECT * FROM clearances ORDER BY rowid').map(recordFromSqlite), records);
    expect(sqlite3(db(), 'PRAGMA integrity_check')).toEqual([{ integrity_check: 'ok' }]);
  });

  it('gives each column one type: dates as ISO text, flags as integers 0 and 1, reviewDays as an integer', () => {
    const [row] = sqlite3(
      db(),
      `SELECT
        (SELECT group_concat(DISTINCT typeof(decisionDate)) FROM clearances) AS decisionDate,
        (SELECT group_concat(DISTINCT typeof(thirdParty)) FROM clearances) AS thirdParty,
        (SELECT group_concat(DISTINCT thirdParty) FROM clearances) AS thirdPartyValues,
        (SELECT group_concat(DISTINCT typeof(reviewDays)) FROM clearances) AS reviewDays,
        (SELECT group_concat(DISTINCT typeof(deviceName)) FROM clearances) AS deviceName`,
    );
    const sorted = (s: unknown) => String(s).split(',').sort().join(',');
    expect({ ...row, decisionDate: sorted(row?.decisionDate), thirdParty: sorted(row?.thirdParty), thirdPartyValues: sorted(row?.thirdPartyValues), reviewDays: sorted(row?.reviewDays) }).toEqual({
      decisionDate: records.some((r) => r.decisionDate === null) ? 'null,text' : 'text',
      thirdParty: records.some((r) => r.thirdParty === null) ? 'integer,null' : 'integer',
      thirdPartyValues: '0,1',
      reviewDays: records.some((r) => r.reviewDays === null) ? 'integer,null' : 'integer',
      deviceName: 'text',
    });
    // STRICT: the table itself refuses a value of another type.
    expect(sqlite3(db(), "SELECT sql LIKE '%) STRICT' AS strict FROM sqlite_schema WHERE name = 'clearances'")).toEqual([{ strict: 1 }]);
  });

  it('searches with FTS5: a word finds exactly the records with that word in their name, applicant, product code or K number', () => {
    for (const word of ['catheter', 'medtronic', 'pump']) {
      const found = sqlite3(db(), `SELECT c.kNumber FROM clearances_fts JOIN clearances c ON c.rowid = clearances_fts.rowid WHERE clearances_fts MATCH ${sqlString(word)} ORDER BY c.kNumber`).map((r) => r.kNumber);
      const words = (s: string | null) => (s ?? '').toLowerCase().split(/[^a-z0-9]+/);
      const expected = records.filter((r) => [r.deviceName, r.applicant, r.productCode, r.kNumber].some((f) => words(f).includes(word))).map((r) => r.kNumber);
      expect(expected.length).toBeGreaterThan(0);
      expect(found).toEqual(expected);
    }
  });
});

describe('both downloads', () => {
  it('round-trip the hard values: quotes, non-ASCII text, empty names, every flag and null', async () => {
    const hard = [
      makeRecord('K000001', { deviceName: `'ONE TOUCH' LATEX "CONDOM" ™ Ünïcødé 🩺`, applicant: "O'Brien, Inc.", thirdParty: true, expeditedReview: false, decisionDate: '1900-01-01', receivedDate: '1899-12-31' }),
      makeRecord('K000002'),
      makeRecord('K999999', { deviceName: 'x'.repeat(5000), productCode: 'DQY', thirdParty: false, expeditedReview: true, decisionDate: '2026-11-27', receivedDate: '2026-01-01', street2: '' }),
    ];
    writeParquet(hard, join(scratch, 'hard.parquet'));
    await writeSqlite(hard, join(scratch, 'hard.sqlite'));
    expectRowsAreRecords(await parquetRows(join(scratch, 'hard.parquet')), hard);
    expectRowsAreRecords(sqlite3(join(scratch, 'hard.sqlite'), 'SELECT * FROM clearances ORDER BY rowid').map(recordFromSqlite), hard);
  });

  it('are valid and empty for a snapshot with no records', async () => {
    writeParquet([], join(scratch, 'empty.parquet'));
    await writeSqlite([], join(scratch, 'empty.sqlite'));
    expect(await duckRows(`SELECT count(*)::INTEGER AS n FROM read_parquet(${sqlString(join(scratch, 'empty.parquet'))})`)).toEqual([{ n: 0 }]);
    expect(sqlite3(join(scratch, 'empty.sqlite'), 'SELECT count(*) AS n FROM clearances')).toEqual([{ n: 0 }]);
  });

  it('are byte-identical from the same inputs, listed in the manifest, and named by meta with the same size and sha256', async () => {
    const again = await buildFixture();
    const manifest = Manifest.parse(JSON.parse(await readFile(join(build.dir, LAYOUT.manifest), 'utf8')));
    // A new build always lists its downloads (only snapshots made before them may lack the member).
    const meta = MetaData.parse(JSON.parse(await readFile(join(build.dir, LAYOUT.meta), 'utf8')));
    for (const path of [LAYOUT.downloadsParquet, LAYOUT.downloadsSqlite]) {
      const a = await readFile(join(build.dir, path));
      expect(Buffer.compare(a, await readFile(join(again.dir, path)))).toBe(0);
      const listed = manifest.files.find((f) => f.path === path);
      expect(listed?.bytes).toBe(a.length);
      const named = meta.downloads.find((d) => d.path === path);
      expect(named && { bytes: named.bytes, sha256: named.sha256 }).toEqual({ bytes: listed?.bytes, sha256: listed?.sha256 });
    }
    expect(meta.downloads.map((d) => [d.format, d.mediaType])).toEqual([
      ['parquet', 'application/vnd.apache.parquet'],
      ['sqlite', 'application/vnd.sqlite3'],
    ]);
    // No file but the two: no journal or temporary file of SQLite's is left in the snapshot.
    expect((await readdir(join(build.dir, 'downloads'))).sort()).toEqual(['clearances.parquet', 'clearances.sqlite']);
  }, 120_000);

  it('stay out of the Worker static assets, which take at most 25 MiB a file', async () => {
    const out = await prepareAssets({ snapshotPath: build.out, publicDir: null, out: join(scratch, 'assets') });
    const manifest = Manifest.parse(JSON.parse(await readFile(join(out, 'snapshot', LAYOUT.manifest), 'utf8')));
    expect(manifest.files.some((f) => f.path.startsWith('downloads/'))).toBe(true);
    await expect(readdir(join(out, 'snapshot', 'downloads'))).rejects.toThrow(/ENOENT/);
    await expect(readFile(join(out, 'snapshot', LAYOUT.recordIndex))).resolves.toBeInstanceOf(Buffer);
  });
});
