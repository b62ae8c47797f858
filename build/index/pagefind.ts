import { join } from 'node:path';
import pLimit from 'p-limit';
import * as pagefind from 'pagefind';
import { LAYOUT, type ClearanceRecord } from '../../src/contract/index.ts';
import type { SnapshotWriter } from '../write/writer.ts';

/**
 * The browser page's text index: one Pagefind record per clearance, so that Pagefind's result counts and filter
 * counts are clearance counts, exactly like the API's `page.total` and `facets`.
 *
 * Capping. Two costs grow faster than the snapshot. Pagefind 1.6's service checks every added record's URL against
 * all records added before it (a linear scan of its page list, so adding n records costs n²/2 steps: 27 s for
 * 58,000 records on a busy 2-core machine, over 20 minutes for 200,000). And its browser runtime downloads a page
 * table of about 7 bytes per record before the first result, plus about 10 bytes per record of filter files for the
 * facet counts. So the index holds at most PAGEFIND_MAX_RECORDS clearances, the newest by decision date (the API's
 * browse order): all of the bundled data today (57,830), about twenty years of FDA's clearances at today's rate of
 * about 3,000 a year. Above the cap the static page says how many clearances its text search covers, still opens any
 * clearance by K number from the record shards, and the server's API covers everything.
 *
 * File budget. A static host allows 20,000 files per snapshot and the record shards alone take up to 10,000 (one per
 * "K1234" prefix). Pagefind writes one fragment file per record unless told otherwise; `maxFragments` makes it
 * bundle consecutive records into at most that many group files. Its word index adds about one chunk file per
 * 500 records, plus three filter files and 13 fixed files: about 3,150 files at the cap, whatever the snapshot's size.
 * The price of grouping: showing one result downloads its group (ceil(records / 3,000) records: 20 at the cap,
 * about 2 KB compressed), so a result page costs at most ten small groups. Records are added in the browse order, so
 * a page of filtered results without query words usually sits in one or two groups.
 *
 * Determinism. Pagefind names every file by a hash of its content, numbers records in the order they arrive, and
 * writes no timestamps; Pagefind 1.6's service handles one message at a time in arrival order, so keeping several
 * additions in flight (pipelining over its stdin) keeps the order, and the same records give the same bytes. The
 * browser-index test builds twice with different pipelining and compares every file.
 *
 * Pagefind's own UI bundles (pagefind-ui.js and friends) are kept: 7 small files that let a mirror drop in Pagefind's
 * stock search box over the same index.
 */
export const PAGEFIND_MAX_RECORDS = 60_000;

export const PAGEFIND_MAX_FRAGMENTS = 3_000;

/** Additions sent to Pagefind before the first one is answered; enough to hide the round trip, bounded for memory. */
const IN_FLIGHT = 256;

export type PagefindRecord = {
  url: string;
  content: string;
  language: string;
  meta: Record<string, string>;
  filters: Record<string, string[]>;
};

/**
 * What Pagefind indexes for one clearance. The filters carry the API's facet names (productCode, applicant,
 * decisionYear), so the page maps one onto the other without a table. Every meta field is searchable in Pagefind 1.6 (the title weighted highest),
 * so the device name, applicant and product code go in `meta`, where the result list also reads them, and `content`
 * holds the rest of the contract's searchable text: the K number and the product code's device type. Dates are left
 * out of both on purpose: Pagefind would index "1990-01-02" as the words 1990, 01 and 02, so "01" would match every
 * clearance. The list shows the decision year from the record's own `decisionYear` filter instead.
 */
export function pagefindRecordOf(record: ClearanceRecord, deviceType: string | null): PagefindRecord {
  const meta: Record<string, string> = { title: record.deviceName || record.kNumber };
  const filters: Record<string, string[]> = {};
  if (record.applicant !== null) {
    meta.applicant = record.applicant;
    filters.applicant = [record.applicant];
  }
  if (record.productCode !== null) {
    meta.productCode = record.productCode;
    filters.productCode = [record.productCode];
  }
  if (record.decisionDate !== null) filters.decisionYear = [record.decisionDate.slice(0, 4)];
  return {
    url: `#record=${record.kNumber}`,
    content: deviceType ? `${record.kNumber} ${deviceType}` : record.kNumber,
    language: 'en',
    meta,
    filters,
  };
}

/** The API's order without query words: decisionDate descending (null last), then kNumber descending. */
export function browseOrder(records: readonly ClearanceRecord[]): ClearanceRecord[] {
  return [...records].sort((a, b) => {
    if (a.decisionDate !== b.decisionDate) {
      if (a.decisionDate === null) return 1;
      if (b.decisionDate === null) return -1;
      return a.decisionDate < b.decisionDate ? 1 : -1;
    }
    return a.kNumber < b.kNumber ? 1 : a.kNumber > b.kNumber ? -1 : 0;
  });
}

export type PagefindWriteOptions = { maxFragments?: number; maxRecords?: number; inFlight?: number };

/**
 * Writes the browser page's Pagefind index under `pagefind/` of the snapshot being built, then adopts its files
 * into the manifest with `writer.adoptDirectory('pagefind')`. Pagefind writes the files itself (through its
 * service binary), which is why they are adopted rather than written through the writer.
 */
export async function writePagefindIndex(
  records: readonly ClearanceRecord[],
  deviceTypes: ReadonlyMap<string, string | null>,
  writer: SnapshotWriter,
  options: PagefindWriteOptions = {},
): Promise<void> {
  const created = await pagefind.createIndex({
    forceLanguage: 'en',
    maxFragments: options.maxFragments ?? PAGEFIND_MAX_FRAGMENTS,
  });
  const index = created.index;
  if (!index) throw new Error(`Pagefind could not create an index: ${created.errors.join('; ') || 'no reason given'}`);
  try {
    const limit = pLimit(options.inFlight ?? IN_FLIGHT);
    const additions: Promise<void>[] = [];
    for (const record of browseOrder(records).slice(0, options.maxRecords ?? PAGEFIND_MAX_RECORDS)) {
      const deviceType = record.productCode === null ? null : (deviceTypes.get(record.productCode) ?? null);
      const entry = pagefindRecordOf(record, deviceType);
      additions.push(
        limit(async () => {
          const added = await index.addCustomRecord(entry);
          if (added.errors.length) throw new Error(`Pagefind refused ${record.kNumber}: ${added.errors.join('; ')}`);
        }),
      );
      // Pagefind answers in order, so awaiting now and then bounds the promises held without losing pipelining.
      if (additions.length >= 8_192) await Promise.all(additions.splice(0));
    }
    await Promise.all(additions);
    const written = await index.writeFiles({ outputPath: join(writer.root, LAYOUT.pagefindDir) });
    if (written.errors.length) throw new Error(`Pagefind could not write its index: ${written.errors.join('; ')}`);
  } finally {
    // The service is a child process: left running, it would keep the build (or a test worker) alive.
    await pagefind.close();
  }
  await writer.adoptDirectory(LAYOUT.pagefindDir);
}
