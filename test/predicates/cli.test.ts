import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { summaryPdf } from '../helpers/summary-pdf.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const run = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'build/predicates/cli.ts', ...args], { cwd: ROOT, encoding: 'utf8' });

const PREDICATE_TEXT = '510(k) Summary\n\nPredicate Device:\n\nHemosIL D-Dimer K972696\n\nRe: k050278 Trade/Device Name: HemosIL D-Dimer';

describe('npm run predicates -- extract', () => {
  let dir: string;
  let inDir: string;
  beforeAll(async () => {
    dir = await testTempDir('predicates-cli-');
    inDir = join(dir, 'in');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(inDir);
    writeFileSync(join(inDir, 'K050278.md'), PREDICATE_TEXT);
    writeFileSync(join(inDir, 'K060001.txt'), 'The device is substantially equivalent to the following devices: the Acme Glucose Meter (K 05 063 2) and the Acme Strip (DEN150058).');
    writeFileSync(join(inDir, 'k070001.pdf'), await summaryPdf('Predicate Devices:\nBD ProbeTec ET CT/GC Amplified DNA Assay (K984631), APTIMA Combo 2 Assay (K003395)'));
    const blank = await PDFDocument.create();
    blank.addPage();
    writeFileSync(join(inDir, 'K080001.pdf'), await blank.save());
    writeFileSync(join(inDir, 'K090001.pdf'), 'this is no PDF');
    writeFileSync(join(inDir, 'K100001.txt'), 'The analyzer (K111111) and the calibrator (K222222) are used with it.');
    writeFileSync(join(inDir, 'notes.txt'), 'not a summary');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the edges and a report saying, per device, whether its text was read and why nothing was found', { timeout: 120_000 }, () => {
    const r = run('extract', '--in', inDir, '--out', join(dir, 'edges.csv'), '--report', join(dir, 'report.csv'), '--quiet');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/skipped notes\.txt/);
    expect(r.stdout).toMatch(/6 summaries, 4 read, 3 with a predicate, 5 edges, 1 files skipped/);
    expect(readFileSync(join(dir, 'edges.csv'), 'utf8')).toBe(
      'device,predicate\nK050278,K972696\nK060001,K050632\nK060001,DEN150058\nK070001,K984631\nK070001,K003395\n',
    );
    const report = readFileSync(join(dir, 'report.csv'), 'utf8').trim().split('\n');
    expect(report[0]).toBe('device,status,predicates,reason');
    const byDevice = new Map(report.slice(1).map((l) => [l.split(',')[0], l]));
    expect(byDevice.get('K050278')).toMatch(/^K050278,read,K972696,/);
    expect(byDevice.get('K070001')).toMatch(/^K070001,read,K984631 K003395,/);
    expect(byDevice.get('K080001')).toMatch(/^K080001,no-text,,no text layer on its 1 page\(s\): a scan$/);
    expect(byDevice.get('K090001')).toMatch(/^K090001,unreadable,,not a readable PDF: /);
    expect(byDevice.get('K100001')).toMatch(/^K100001,read,,none of the 2 numbers named stands where a predicate is named$/);
  });

  it('writes an edge input folder for the build with --edges', { timeout: 120_000 }, () => {
    const out = join(dir, 'edges');
    const r = run('extract', '--in', inDir, '--edges', out, '--quiet');
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(out, 'source.json'), 'utf8'))).toEqual({ source: 'summary', kind: 'predicate', report: 'report.csv' });
    expect(readFileSync(join(out, 'predicates.csv'), 'utf8')).toBe(readFileSync(join(dir, 'edges.csv'), 'utf8'));
    expect(readFileSync(join(out, 'report.csv'), 'utf8')).toBe(readFileSync(join(dir, 'report.csv'), 'utf8'));
  });

  it('refuses a wrong use with one line and exit 2', { timeout: 120_000 }, () => {
    const none = run('extract', '--out', join(dir, 'x.csv'));
    expect(none.status).toBe(2);
    expect(none.stderr).toBe('predicates extract: --in is required (see --help)\n');
    const missing = run('extract', '--in', join(dir, 'nowhere'), '--out', join(dir, 'x.csv'));
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/^predicates extract failed: ENOENT/);
    const unknown = run('guess');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command 'guess'/);
  });
});
