import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFdaDate, yearOfDay } from '../../build/generate/dates.ts';
import { buildPool, parsePmnText, type Pool } from '../../build/generate/pool.ts';
import { PMN_COLUMNS } from '../../build/sources/parse.ts';
import { generatePmnFiles } from '../../build/generate/rows.ts';
import { runGenerate } from '../../build/generate.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

const REAL = [
  'data/fda/510k/d8557379_FDA_510K_streamlit_app/pmn7680.txt',
  'data/fda/510k/d8557379_FDA_510K_streamlit_app/pmnlstmn.txt',
];
const COL = Object.fromEntries(PMN_COLUMNS.map((c, i) => [c, i])) as Record<(typeof PMN_COLUMNS)[number], number>;

let pool: Pool;
let realProductCodes: Set<string>;
beforeAll(async () => {
  const files = await Promise.all(REAL.map(async (p) => parsePmnText(p, (await readFile(p)).toString('latin1'))));
  pool = buildPool(files);
  realProductCodes = new Set(files.flatMap((f) => f.rows.map((r) => r[COL.PRODUCTCODE] ?? '')));
});

const rowsOf = (text: string): string[][] =>
  text.split('\r\n').slice(1, -1).map((line) => line.split('|'));

describe('parsePmnText', () => {
  it('refuses a file without FDA\'s header line', () => {
    expect(() => parsePmnText('x.txt', 'K|A\r\n')).toThrow(/header/);
  });
  it('refuses a row with the wrong number of columns', () => {
    expect(() => parsePmnText('x.txt', `${PMN_COLUMNS.join('|')}\r\nK760001|a|b\r\n`)).toThrow(/x.txt line 2: expected 22 columns, got 3/);
  });
});

describe('buildPool', () => {
  it('draws on K-number rows only and finds the real date bounds', () => {
    expect(pool.applicants.length).toBe(pool.devices.length);
    expect(pool.applicants.length).toBeGreaterThan(10_000);
    expect(pool.glitchDates).toContain('08/04/0020');
    expect(yearOfDay(pool.firstDay)).toBe(1976);
    expect(yearOfDay(pool.lastDay)).toBe(2026);
    for (const device of pool.devices) expect(device.startsWith('DEN')).toBe(false);
  });
});

describe('generatePmnFiles', () => {
  const N = 20_000;
  let files: ReturnType<typeof generatePmnFiles>;
  let rows: string[][];
  beforeAll(() => {
    files = generatePmnFiles(pool, { records: N, seed: 'test', rowsPerFile: 7_000 });
    rows = files.flatMap((f) => rowsOf(f.text));
  });

  it('splits into files of at most rowsPerFile rows, each with FDA\'s header and CRLF line ends', () => {
    expect(files.map((f) => f.name)).toEqual(['pmn-generated-1.txt', 'pmn-generated-2.txt', 'pmn-generated-3.txt']);
    for (const f of files) {
      expect(f.rows).toBeLessThanOrEqual(7_000);
      expect(f.text.startsWith(`${PMN_COLUMNS.join('|')}\r\n`)).toBe(true);
      expect(f.text.endsWith('\r\n')).toBe(true);
      expect(f.text.replaceAll('\r\n', '')).not.toMatch(/[\r\n]/);
      // One char per byte: everything written came from FDA's cp1252 bytes.
      expect(f.text).not.toMatch(/[^\x00-\xff]/);
    }
    expect(files.reduce((s, f) => s + f.rows, 0)).toBe(N);
  });

  it('writes N distinct K numbers in 22 columns', () => {
    expect(rows).toHaveLength(N);
    for (const r of rows) expect(r).toHaveLength(22);
    const ks = rows.map((r) => r[COL.KNUMBER] ?? '');
    for (const k of ks) expect(k).toMatch(/^K\d{6}$/);
    expect(new Set(ks).size).toBe(N);
  });

  it('receives each submission in its K number\'s year and decides it later, within the real range', () => {
    let glitches = 0;
    for (const r of rows) {
      const received = parseFdaDate(r[COL.DATERECEIVED] ?? '');
      const decided = parseFdaDate(r[COL.DECISIONDATE] ?? '');
      expect(received).not.toBeNull();
      if (decided === null || yearOfDay(decided) < 1976) {
        glitches++;
        continue;
      }
      const yy = Number((r[COL.KNUMBER] ?? '').slice(1, 3));
      expect(yearOfDay(received ?? 0) % 100).toBe(yy);
      expect(decided).toBeGreaterThan(received ?? Infinity);
      expect(received).toBeGreaterThanOrEqual(pool.firstDay);
      expect(decided).toBeLessThanOrEqual(pool.lastDay);
    }
    expect(glitches).toBeLessThan(N / 1_000);
  });

  it('draws product codes, names and applicants from the real rows, shuffled', () => {
    const codes = new Set(rows.map((r) => r[COL.PRODUCTCODE] ?? ''));
    for (const c of codes) expect(realProductCodes.has(c)).toBe(true);
    expect(codes.size).toBeGreaterThan(500);
    const applicants = new Set(pool.applicants);
    const devices = new Set(pool.devices);
    let sameAsSource = 0;
    for (const r of rows) {
      const applicant = r.slice(COL.APPLICANT, COL.DATERECEIVED).join('|');
      const device = r.slice(COL.DECISION).join('|');
      expect(applicants.has(applicant)).toBe(true);
      expect(devices.has(device)).toBe(true);
      if (pool.applicants.indexOf(applicant) === pool.devices.indexOf(device)) sameAsSource++;
    }
    expect(sameAsSource).toBeLessThan(N / 100);
  });

  it('is deterministic for a seed and differs between seeds', () => {
    const again = generatePmnFiles(pool, { records: 2_000, seed: 'test' });
    const same = generatePmnFiles(pool, { records: 2_000, seed: 'test' });
    const other = generatePmnFiles(pool, { records: 2_000, seed: 'other' });
    expect(again[0]?.text).toBe(same[0]?.text);
    expect(again[0]?.text).not.toBe(other[0]?.text);
  });
});

describe('runGenerate', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await testTempDir('generate-');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes the files, replacing those of an earlier run, and reports rows and bytes', async () => {
    await writeFile(join(dir, 'pmn-generated-9.txt'), 'stale');
    await writeFile(join(dir, 'keep.txt'), 'not ours');
    const result = await runGenerate({ records: 1_500, out: dir, rowsPerFile: 1_000, source: 'data/fda/510k' });
    expect((await readdir(dir)).sort()).toEqual(['keep.txt', 'pmn-generated-1.txt', 'pmn-generated-2.txt', 'predicates-generated']);
    expect((await readdir(join(dir, 'predicates-generated'))).sort()).toEqual(['predicates.csv', 'source.json']);
    expect(result.edges).toBeGreaterThan(500);
    expect(result.files.map((f) => f.rows)).toEqual([750, 750]);
    const bytes = await readFile(join(dir, 'pmn-generated-1.txt'));
    expect(bytes.byteLength).toBe(result.files[0]?.bytes);
    expect(bytes.toString('latin1').split('\r\n')).toHaveLength(752);
  });
});
