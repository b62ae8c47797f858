import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCsv } from '../../build/lineage/csv.ts';
import { SummaryState } from '../../build/predicates/fetch.ts';
import { runBuild, type BuildOptions } from '../../build/snapshot/build.ts';
import type { SyncOptions } from '../../build/sync/config.ts';
import { runSync } from '../../build/sync/run.ts';
import { LineageData, LineageInput } from '../../src/contract/index.ts';
import { openSnapshotDirectory } from '../../src/node/index.ts';
import { CursorCodec, lineage, prepareLineage } from '../../src/operations/index.ts';
import { summaryPdf } from '../helpers/summary-pdf.ts';
import { ORIGIN_FILE_NAMES, startOrigin, type Origin } from './origin.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * The nightly sync with 510(k) summaries, against a local origin holding FDA's files and, on the same host, the
 * summaries of the fixture's newest clearances (PDFs made by pdf-lib here): the sync fetches them, reads them, builds,
 * and the snapshot's stored predicates for those clearances are the ones the PDFs state (known here, not taken from
 * the extractor); a second night fetches nothing again.
 */
const BUNDLED_EDGES = fileURLToPath(new URL('../../data/fda/predicates', import.meta.url));
const NAMED = join(BUNDLED_EDGES, '510kfyi/predicates.csv');

/** The fixture's clearances decided on its last two days (10/15 and 10/16/2020), K200595 reviewed by a lab panel (HE). */
const RECENT = ['K200207', 'K200595', 'K201129', 'K201587', 'K202041', 'K202364', 'K202680'];
/** What each summary PDF says (predicates stated, a reference method named beside them). */
const SUMMARIES: Record<string, { path: string; text: string }> = {
  K200595: {
    path: '/cdrh_docs/pdf20/K200595.pdf',
    text: '510(k) Summary\n\nPredicate Devices:\nAcme Hematology Analyzer (K190001)\nAcme Hematology Controls (K190002)\n\nThe method comparison used the reference method Beta Cell Counter (K180003).',
  },
  K201129: {
    path: '/cdrh_docs/pdf20/K201129.pdf',
    text: '510(k) Summary\n\nPredicate Device: Acme Surgical Stapler (K191234).\n\nBench testing was performed with the Acme Stapler Cartridge previously cleared under K180005.',
  },
  K202680: {
    path: '/cdrh_docs/pdf20/K202680.pdf',
    text: '510(k) Summary\n\nThe subject device is substantially equivalent to the Ortho Fixation Plate (K193333).\n\nThe plates are used with the screws of K171717.',
  },
};
/** FDA's decision summary for the lab device: its field names one predicate, and that is the authority. */
const DECISION = {
  path: '/cdrh_docs/reviews/K200595.pdf',
  text: 'DECISION SUMMARY\n\nA. 510(k) Number: K200595\n\nV. Substantial Equivalence Information:\n\nA. Predicate Device Name(s): Acme Hematology Analyzer\nB. Predicate 510(k) Number(s): K190001\nC. Comparison with Predicate(s):\nDevice & Predicate Device(s): K200595 K190001 K190002',
};
const EXPECTED: Record<string, string[]> = { K200595: ['K190001'], K201129: ['K191234'], K202680: ['K193333'] };

let origin: Origin;
let work: string;
let dir: string;
let out: string;
let clock = 0;
const now = () => new Date(Date.UTC(2026, 7, 18, 2, 0, 0) + clock++ * 60_000);

const options = (): Partial<SyncOptions> => ({
  baseUrl: origin.url,
  files: ORIGIN_FILE_NAMES,
  dir,
  out,
  timeoutMs: 5_000,
  retries: 0,
  baseDelayMs: 5,
  maxDelayMs: 20,
  now,
  edges: [BUNDLED_EDGES],
  summaries: { baseUrl: new URL('/', origin.url).href, days: 1, limit: null, intervalMs: 0, maxBytes: 1024 * 1024 },
  build: (o: BuildOptions) => runBuild({ ...o, sourceDateEpoch: 1_786_924_800 }),
});

/** The stored predicates of a device, one step, through the lineage operation over the published snapshot. */
async function storedPredicates(id: string) {
  const snapshot = await openSnapshotDirectory(out);
  const cursors = new CursorCodec();
  const parsed = LineageInput.parse({ id, direction: 'predicates', depth: 1, kinds: null, limit: 100, cursor: null });
  const result = await lineage(prepareLineage(parsed, { cursors }), { snapshot, servedAt: new Date(), cursors });
  const data = LineageData.parse((result.data as { toJSON(): unknown }).toJSON());
  return data.items.map((i) => `${i.kNumber} ${i.kind} ${i.source}`).sort();
}

beforeAll(async () => {
  origin = await startOrigin();
  for (const s of Object.values(SUMMARIES)) origin.documents.set(s.path, await summaryPdf(s.text));
  origin.documents.set(DECISION.path, await summaryPdf(DECISION.text));
  work = await testTempDir('sync-predicates-');
  dir = join(work, '.sync');
  out = join(work, 'snapshot');
}, 60_000);
afterAll(async () => {
  await origin.close();
  await rm(work, { recursive: true, force: true });
});

describe('the nightly sync fetches, reads and builds the 510(k) summaries of new clearances', () => {
  it('stores the predicates the summaries state, FDA’s decision summary first, and 510k.fyi’s list for the rest', { timeout: 240_000 }, async () => {
    const result = await runSync(options());
    expect(result.outcome, result.detail).toBe('built');
    expect(result.detail).toMatch(/Summaries of 7 recent clearances: 3 fetched, 4 missing at FDA, 0 failed/);

    // Each recent clearance's summary asked for once, and the lab device's decision summary; nothing older.
    const asked = origin.requests.filter((r) => r.path.startsWith('/cdrh_docs/')).map((r) => r.path).sort();
    expect(asked).toEqual([...RECENT.map((id) => `/cdrh_docs/pdf20/${id}.pdf`), DECISION.path].sort());

    // Stored edges of the devices whose summary was read: exactly what their PDFs state, kind predicate.
    for (const [id, predicates] of Object.entries(EXPECTED)) {
      expect(await storedPredicates(id), id).toEqual(predicates.map((p) => `${p} predicate summary`).sort());
    }
    // A device with no summary at FDA keeps 510k.fyi's numbers, read here from its file, as `named` edges.
    const named = parseCsv(await readFile(NAMED, 'utf8'), NAMED).slice(1);
    const namedSource = (JSON.parse(await readFile(join(BUNDLED_EDGES, '510kfyi/source.json'), 'utf8')) as { source: string }).source;
    for (const id of ['K201587', 'K202041', 'K202364']) {
      const expected = [...new Set(named.filter((r) => r[0] === id).map((r) => r[1] as string))].map((p) => `${p} named ${namedSource}`).sort();
      expect(expected.length, id).toBeGreaterThan(0);
      expect(await storedPredicates(id), id).toEqual(expected);
    }
    // The bundled reading of summaries still stands for the devices the sync did not fetch.
    const bundled = parseCsv(await readFile(join(BUNDLED_EDGES, 'summary/predicates.csv'), 'utf8'), 'bundled').slice(1);
    const [device, predicate] = bundled[0] as [string, string];
    expect(await storedPredicates(device)).toContain(`${predicate} predicate summary`);

    // The missing ones are recorded, and what was fetched is kept.
    const state = SummaryState.parse(JSON.parse(await readFile(join(dir, 'summaries/state.json'), 'utf8')));
    expect(state.devices.K200207).toMatchObject({ status: 'missing' });
    expect(state.devices.K200595?.decision).toMatchObject({ status: 'fetched', predicates: ['K190001'] });
    expect(await readFile(join(dir, 'summaries/pdf/K201129.pdf'))).toEqual(Buffer.from(origin.documents.get(SUMMARIES.K201129?.path as string) as Uint8Array));
  });

  it('a second night fetches nothing twice, not even a summary that has since appeared, and does not rebuild', { timeout: 240_000 }, async () => {
    origin.requests.length = 0;
    origin.documents.set('/cdrh_docs/pdf20/K200207.pdf', await summaryPdf('510(k) Summary\n\nPredicate Device: Acme Lens (K170007).'));
    const result = await runSync(options());
    expect(result.outcome, result.detail).toBe('unchanged');
    expect(result.detail).toMatch(/0 fetched, 0 missing at FDA, 0 failed, 7 kept before/);
    expect(origin.requests.filter((r) => r.path.startsWith('/cdrh_docs/'))).toEqual([]);
    expect(await storedPredicates('K201129')).toEqual(['K191234 predicate summary']);
  });
});
