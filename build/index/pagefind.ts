import { join } from 'node:path';
import pLimit from 'p-limit';
import { z } from 'zod';
import { LAYOUT, type ClearanceRecord } from '../../src/contract/index.ts';
import type { SnapshotWriter } from '../write/writer.ts';

/**
 * The browser page's text index: one Pagefind record per clearance, so that Pagefind's result counts and filter
 * counts are clearance counts, exactly like the API's `page.total` and `facets`.
 *
 * Split into several Pagefind indexes. Pagefind 1.6's service checks every added record's URL against all records
 * added before it (a linear scan of its page list), so one index of n records costs n²/2 steps: 35-40 s for 57,830
 * records, over 20 minutes for 200,000. So the records are split into buckets of at most PAGEFIND_BUCKET_RECORDS by
 * the K number's year ("K26…" = received in 2026; whole years together, oldest first, a year larger than a bucket
 * cut in K-number order), each bucket is its own Pagefind index under `pagefind/<first K number>/`, and the buckets
 * are built by PAGEFIND_SERVICES Pagefind services side by side. The browser merges them with Pagefind's documented
 * multi-index support (`mergeIndex`): it searches every index and sums their result lists and their filter counts,
 * so totals and facet counts stay clearance counts. `pagefind/indexes.json` lists the buckets, newest first: the page
 * loads the first as Pagefind's primary index and merges the rest. The split also keeps a nightly sync cheap for
 * mirrors: new clearances land in the newest year, so only the newest bucket's files change, where one index
 * renumbered and regrouped most of its files.
 *
 * Order. Without query words Pagefind gives each index's records in the order they were added (the API's browse
 * order, newest decision first) and lists the indexes in turn, newest bucket first: the API's order except where a
 * clearance received in one year was decided in a later one. With query words the merged list is sorted by score, and
 * each index scores with its own word statistics, so the ranking can differ slightly from one big index.
 *
 * Capping. Pagefind's browser runtime downloads a page table of about 7 bytes per record before the first result,
 * plus about 10 bytes per record of filter files for the facet counts, and the build still costs about 0.3 ms per
 * record of one core. So the index holds at most PAGEFIND_MAX_RECORDS clearances: the newest whole buckets that fit,
 * which is all of FDA's clearances today (about 175,000) with room for years of growth. Whole buckets, so that once
 * FDA outgrows the cap the oldest bucket is dropped now and then instead of every bucket's members shifting each
 * night. Above the cap the static page says how many clearances its text search covers, still opens any clearance
 * by K number from the record shards, and the server's API covers everything.
 *
 * File budget. A static host allows 20,000 files per snapshot and the record shards alone take up to 10,001 (one per
 * "K1234" prefix). Pagefind writes one fragment file per record unless told otherwise; `maxFragments` makes it bundle
 * consecutive records into group files, here of PAGEFIND_RECORDS_PER_FRAGMENT records each. Its word index adds about
 * one chunk file per 500 records, and every bucket has three filter files and 13 fixed files: about
 * records / 25 + records / 500 + 16 × buckets files, 8,600 at the cap. The price of grouping: showing one result
 * downloads its group * (25 records, about 2.5 KB compressed), so a result page costs at most ten small groups. Records are added in the
 * browse order, so a page of filtered results without query words usually sits in one or two groups.
 *
 * Determinism. Pagefind names every file by a hash of its content, numbers records in the order they arrive, and
 * writes no timestamps; Pagefind 1.6's service handles one message at a time in arrival order, so keeping several
 * additions in flight (pipelining over its stdin) keeps the order, and the same records give the same bytes. Each
 * bucket is its own index, so which service builds it, and when, changes nothing. The browser-index test builds
 * twice with different pipelining and services and compares every file.
 *
 * Pagefind's own UI bundles (pagefind-ui.js and friends) are kept in every bucket: 7 small files that let a mirror
 * drop in Pagefind's stock search box over the same indexes (with its `mergeIndex` option).
 */
export const PAGEFIND_MAX_RECORDS = 200_000;

/** Records per Pagefind index: 15,000 keeps each index's quadratic build near 2 s, and a bucket is about 5 years. */
export const PAGEFIND_BUCKET_RECORDS = 15_000;

export const PAGEFIND_RECORDS_PER_FRAGMENT = 25;

/** Pagefind services run side by side; each is one process using about one core. */
export const PAGEFIND_SERVICES = 2;

/** Additions sent to Pagefind before the first one is answered; enough to hide the round trip, bounded for memory. */
const IN_FLIGHT = 256;

/** `pagefind/indexes.json`: the Pagefind indexes, newest bucket first; `path` is relative to `pagefind/`. */
export const PagefindIndexes = z.object({
  records: z.number().int().nonnegative(),
  indexes: z.array(
    z.object({
      path: z.string().regex(/^K\d{6}\/$/),
      records: z.number().int().positive(),
      first: z.string(),
      last: z.string(),
    }),
  ),
});
export type PagefindIndexes = z.infer<typeof PagefindIndexes>;

export const PAGEFIND_INDEXES_PATH = `${LAYOUT.pagefindDir}/indexes.json`;

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

/** The year a K number was received in: "K76…" to "K99…" are 1976-1999, "K00…" on are 2000 on. */
export function kNumberYear(kNumber: string): number {
  const yy = Number(kNumber.slice(1, 3));
  return yy >= 76 ? 1900 + yy : 2000 + yy;
}

/**
 * Splits records into buckets of at most `maxRecords`, oldest receipt year first: whole years together while they
 * fit, so that a bucket's members change only when its own years do; a year larger than a bucket is cut into full
 * buckets in K-number order and its rest starts the next. Each bucket keeps K-number order.
 */
export function pagefindBuckets(records: readonly ClearanceRecord[], maxRecords: number): ClearanceRecord[][] {
  const sorted = [...records].sort((a, b) => kNumberYear(a.kNumber) - kNumberYear(b.kNumber) || (a.kNumber < b.kNumber ? -1 : a.kNumber > b.kNumber ? 1 : 0));
  const buckets: ClearanceRecord[][] = [];
  let current: ClearanceRecord[] = [];
  for (let i = 0; i < sorted.length; ) {
    const year = kNumberYear(sorted[i]!.kNumber);
    let j = i;
    while (j < sorted.length && kNumberYear(sorted[j]!.kNumber) === year) j++;
    let group = sorted.slice(i, j);
    i = j;
    if (current.length + group.length > maxRecords && current.length > 0) {
      buckets.push(current);
      current = [];
    }
    while (group.length > maxRecords) {
      buckets.push(group.slice(0, maxRecords));
      group = group.slice(maxRecords);
    }
    current.push(...group);
  }
  if (current.length > 0) buckets.push(current);
  return buckets;
}

/** The newest buckets whose records add up to at most `maxRecords`, newest first. */
export function newestBuckets(buckets: readonly ClearanceRecord[][], maxRecords: number): ClearanceRecord[][] {
  const kept: ClearanceRecord[][] = [];
  let total = 0;
  for (const bucket of [...buckets].reverse()) {
    if (total + bucket.length > maxRecords) break;
    kept.push(bucket);
    total += bucket.length;
  }
  return kept;
}

export type PagefindWriteOptions = {
  maxRecords?: number;
  bucketRecords?: number;
  recordsPerFragment?: number;
  services?: number;
  inFlight?: number;
};

type PagefindApi = typeof import('pagefind');

/**
 * One Pagefind service per call. The package keeps one service process per module instance, and a module imported
 * under another URL (a query string) is another instance: the only way through its public entry to run several.
 */
async function openService(n: number): Promise<PagefindApi> {
  return (await import(`${import.meta.resolve('pagefind')}?service=${n}`)) as PagefindApi;
}

async function writeOneIndex(
  api: PagefindApi,
  bucket: readonly ClearanceRecord[],
  deviceTypes: ReadonlyMap<string, string | null>,
  outputPath: string,
  recordsPerFragment: number,
  inFlight: number,
): Promise<void> {
  const created = await api.createIndex({ forceLanguage: 'en', maxFragments: Math.ceil(bucket.length / recordsPerFragment) });
  const index = created.index;
  if (!index) throw new Error(`Pagefind could not create an index: ${created.errors.join('; ') || 'no reason given'}`);
  const limit = pLimit(inFlight);
  const additions: Promise<void>[] = [];
  for (const record of browseOrder(bucket)) {
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
  const written = await index.writeFiles({ outputPath });
  if (written.errors.length) throw new Error(`Pagefind could not write its index: ${written.errors.join('; ')}`);
  // The service keeps every index it built in memory until told otherwise.
  await index.deleteIndex();
}

/**
 * Writes the browser page's Pagefind indexes under `pagefind/<bucket>/` of the snapshot being built and their list
 * `pagefind/indexes.json`, then adopts Pagefind's files into the manifest with `writer.adoptDirectory('pagefind')`.
 * Pagefind writes the files itself (through its service binary), which is why they are adopted rather than written
 * through the writer.
 */
export async function writePagefindIndex(
  records: readonly ClearanceRecord[],
  deviceTypes: ReadonlyMap<string, string | null>,
  writer: SnapshotWriter,
  options: PagefindWriteOptions = {},
): Promise<void> {
  const buckets = newestBuckets(
    pagefindBuckets(records, options.bucketRecords ?? PAGEFIND_BUCKET_RECORDS),
    options.maxRecords ?? PAGEFIND_MAX_RECORDS,
  );
  const kept = buckets.flat();
  const pathOf = (bucket: readonly ClearanceRecord[]) => `${bucket[0]!.kNumber}/`;
  const services = await Promise.all(
    Array.from({ length: Math.max(1, Math.min(options.services ?? PAGEFIND_SERVICES, buckets.length)) }, (_, n) => openService(n)),
  );
  try {
    // Each service takes the next bucket when it is free; the biggest first, so none is left for last alone.
    const queue = [...buckets].sort((a, b) => b.length - a.length);
    let failed = false;
    const lanes = await Promise.allSettled(
      services.map(async (api) => {
        for (let bucket = queue.shift(); bucket && !failed; bucket = queue.shift()) {
          const outputPath = join(writer.root, LAYOUT.pagefindDir, pathOf(bucket));
          try {
            await writeOneIndex(api, bucket, deviceTypes, outputPath, options.recordsPerFragment ?? PAGEFIND_RECORDS_PER_FRAGMENT, options.inFlight ?? IN_FLIGHT);
          } catch (err) {
            failed = true;
            throw err;
          }
        }
      }),
    );
    // Every lane has stopped before the services close: closing one mid-request would leave its promises hanging.
    const rejected = lanes.find((l) => l.status === 'rejected');
    if (rejected) throw rejected.reason;
  } finally {
    // Each service is a child process: left running, it would keep the build (or a test worker) alive.
    await Promise.all(services.map((api) => api.close()));
  }
  if (buckets.length > 0) await writer.adoptDirectory(LAYOUT.pagefindDir);
  writer.writeJson(PAGEFIND_INDEXES_PATH, PagefindIndexes, {
    records: kept.length,
    indexes: buckets.map((b) => ({ path: pathOf(b), records: b.length, first: b[0]!.kNumber, last: b[b.length - 1]!.kNumber })),
  });
}
