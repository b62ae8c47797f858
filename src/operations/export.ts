import { z } from 'zod';
import type { ExportInput } from '../contract/index.ts';
import { ByteSink, CSV_HEAD, writeCsvRow } from './csv.ts';
import { SORTS } from '../contract/index.ts';
import type { SearchIndex } from '../search/model.ts';
import type { ParsedQuery } from '../search/grammar.ts';
import { matchesOf } from '../search/engine.ts';
import { kNumberText } from '../search/k-number.ts';
import { compareKeys, orderPage, orderRange, sortKey, type Sort } from '../search/sort.ts';
import type { HeldTable, ReadCounts, Snapshot } from '../snapshot/index.ts';
import { ApiError, refusingCostlyQueries } from './errors.ts';
import { matchIndexOf } from './search.ts';
import { partitionPoint, lowerBound } from '../utils/bisect.ts';
import { CursorCodec } from './cursor.ts';
import { defaultExportTables, type ExportTables } from './export-tables.ts';

/**
 * The export of a whole filtered result set (docs/search.md, "Export"): every match of a search, in the search's
 * order, as CSV or NDJSON. Everything here is node-free; each host streams the chunks (src/server/stream.ts,
 * src/worker/index.ts). Memory is the list of matching ids (4 bytes a match) and one batch of records, whatever the
 * size of the set.
 */
export type PreparedExport = {
  /** Matches of the whole search, and how many this answer holds (after the cursor, up to the limit). */
  total: number;
  count: number;
  /** Where the next part starts when `limit` cut this one short, else null. */
  nextCursor: string | null;
  contentType: string;
  chunks: AsyncIterable<Uint8Array>;
};

/**
 * Records are read this many at a time, in K number order within a batch, so that neighbours in a shard are read
 * together, and each batch goes out as one chunk (about 2 MiB), so the socket sees few large writes.
 */
export const EXPORT_BATCH = 2048;

/**
 * Batches whose shards are hinted to the storage before they are read, once the export's reads are seen to wait on
 * the disk: an export's first batches meet most of its shards for the first time (later ones mostly come back to
 * shards met before), so the hints run well ahead. While the reads come from memory nothing is hinted: a prefetch
 * would only copy shards the kernel holds already, on the core the client and the kernel's sending need.
 */
const PREFETCH_AHEAD = 4;

/**
 * Records read, or written out, between two turns of the host (`ExportOptions.turn`) at most: a batch is about 2 MiB,
 * whose reads (each record opened, read and hashed; synchronous on a local disk) and CSV rows would otherwise each hold
 * the event loop for all of the batch, some tens of milliseconds at a time.
 */
export const EXPORT_SLICE = 128;

/**
 * Milliseconds of reads or rows between two turns of the host at most, whatever the count. A slice's records can be
 * far apart (an export in date order meets a shard of its own for nearly every record, each opened, read and hashed),
 * and the work between two turns runs outside the host's account of its turns (the turn it asks for ends as it starts),
 * so an export's slice must end early on its own: several exports resumed in one turn of the loop otherwise made a
 * request arriving meanwhile wait for all their slices together.
 */
export const EXPORT_SLICE_MS = 1;

/** Records read or written between two looks at the clock: the clock costs less than a record, but not nothing. */
const CLOCK_EVERY = 8;

/** Records whose shards are hinted to the storage at once (`Snapshot.prefetchRecords`). */
const HINT_PIECE = 256;

/** The cursor: the sort it belongs to and the sort key of the last record sent (src/search/sort.ts). */
const ExportCursor = z.strictObject({ v: z.literal(1), s: z.enum(SORTS), k: z.array(z.number()).min(1).max(4) });
type ExportCursor = z.infer<typeof ExportCursor>;

const encoder = new TextEncoder();

/** Export cursors are signed with the catalog's key (cursor.ts), under their own domain so neither passes as the other. */
const CURSOR_DOMAIN = 'device-510k/export-cursor';
/** For callers that give no codec (tests, tools): the built-in key. A server passes the one CURSOR_SECRET keys. */
const BUILT_IN_CODEC = new CursorCodec();

export function encodeExportCursor(cursor: ExportCursor, cursors: CursorCodec = BUILT_IN_CODEC): string {
  return cursors.signAs(CURSOR_DOMAIN, JSON.stringify(cursor));
}

function decodeExportCursor(text: string, sort: Sort, cursors: CursorCodec): ExportCursor {
  const opened = cursors.openAs(CURSOR_DOMAIN, text);
  let value: unknown = null;
  try {
    value = opened === null ? null : JSON.parse(opened);
  } catch {
    value = null;
  }
  const parsed = ExportCursor.safeParse(value);
  if (!parsed.success) throw new ApiError('invalid_cursor', 'This export cursor was not issued by this service or was altered.');
  if (parsed.data.s !== sort) {
    throw new ApiError('invalid_cursor', `This export cursor belongs to sort ${parsed.data.s}; ask with the same sort to resume.`);
  }
  return parsed.data;
}

export type ExportOptions = {
  /**
   * Chunks are lent: each is valid only until the next is asked for, whose bytes then reuse its memory. For a host
   * that is done with a chunk when it asks for the next (the Node server waits until the socket took it): an export
   * then holds one batch's buffers whatever its length, where fresh chunks would pile up until a collection.
   */
  lend?: boolean;
  /** Records a batch; EXPORT_BATCH but in tests, where a small fixture then spans several batches. */
  batchSize?: number;
  /**
   * Awaited before each batch, and then every `sliceRecords` records read and every `sliceRecords` records written
   * out: a host that runs work in turns of the event loop (src/server/turns.ts) has an export's work run in the
   * export's turns, a slice at a time, so that no batch holds the loop from its first read to its last row.
   */
  turn?: () => Promise<void>;
  /** Records read or written between two turns at most: EXPORT_SLICE but in tests. */
  sliceRecords?: number;
  /** Milliseconds of work between two turns at most: EXPORT_SLICE_MS but in tests. */
  sliceMs?: number;
  /** The clock the slices are timed by (milliseconds): performance.now but in tests. */
  now?: () => number;
  /**
   * Awaited between the phases of the preparation (after the search, after the order), where the host's turn may go
   * to other requests (src/server/turns.ts gives a request that has not started the turn before a paused job).
   */
  pause?: () => Promise<void>;
  /** Signs and checks the export's cursors; the built-in key when not given. */
  cursors?: CursorCodec;
  /**
   * The record table's parts, shared by every export of the process and bounded in bytes (export-tables.ts); when not
   * given, the process's default one.
   */
  tables?: ExportTables;
};

export async function prepareExport(input: ExportInput & { parsed: ParsedQuery }, snapshot: Snapshot, options: ExportOptions = {}): Promise<PreparedExport> {
  const sort: Sort = input.sort ?? 'relevance';
  const { index, release } = await matchIndexOf(snapshot, { ...input, sort });
  try {
    return await exportOver(index, input, sort, snapshot, options);
  } finally {
    release();
  }
}

async function exportOver(index: SearchIndex, input: ExportInput & { parsed: ParsedQuery }, sort: Sort, snapshot: Snapshot, options: ExportOptions): Promise<PreparedExport> {
  const matches = refusingCostlyQueries(() => matchesOf(index, { ...input, sort }));
  await options.pause?.();
  // A range of ids (no words) is ordered as one list, not listed and then ordered.
  const { docs, scores } = 'docs' in matches ? matches : { docs: new Uint32Array(0), scores: null };
  const ordered = 'docs' in matches ? orderPage(index, docs, scores, sort, 0, docs.length) : orderRange(index, matches.lo, matches.hi, sort, 0, matches.hi - matches.lo);
  await options.pause?.();
  const scoreOf = (d: number): number => {
    if (scores === null) return 0;
    return scores[lowerBound(docs, d)]!;
  };
  const keyAt = (i: number) => sortKey(index, ordered[i]!, sort, scoreOf(ordered[i]!));

  let after: number[] | null = null;
  if (input.cursor !== null) after = decodeExportCursor(input.cursor, sort, options.cursors ?? BUILT_IN_CODEC).k;
  else if (input.after !== null) after = keyOfKNumber(index, input.after, sort, scoreOf);
  const key = after;
  const start = key === null ? 0 : partitionPoint(0, ordered.length, (i) => compareKeys(keyAt(i), key) <= 0);
  const end = input.limit === null ? ordered.length : Math.min(ordered.length, start + input.limit);
  const nextCursor = end < ordered.length && end > start ? encodeExportCursor({ v: 1, s: sort, k: keyAt(end - 1) }, options.cursors) : null;
  const csv = input.format === 'csv';
  return {
    total: ordered.length,
    count: end - start,
    nextCursor,
    contentType: csv ? 'text/csv; charset=utf-8; header=present' : 'application/x-ndjson; charset=utf-8',
    chunks: exportChunks(snapshot, index, ordered.subarray(start, end), csv, options.batchSize ?? EXPORT_BATCH, options.lend ?? false, (options.tables ?? defaultExportTables()).of(snapshot), options.turn && slicedTurn(options.turn, options.sliceRecords ?? EXPORT_SLICE, options.sliceMs ?? EXPORT_SLICE_MS, options.now ?? (() => performance.now()))),
  };
}

/** The sort key of the record `after` names; an error when this snapshot has no such record. */
function keyOfKNumber(index: SearchIndex, kNumber: string, sort: Sort, scoreOf: (d: number) => number): number[] {
  const digits = Number(kNumber.slice(1));
  const { byKNumber, docKNumber } = index;
  const d = byKNumber[partitionPoint(0, byKNumber.length, (i) => docKNumber[byKNumber[i]!]! < digits)];
  if (d === undefined || docKNumber[d] !== digits) {
    throw new ApiError('invalid_cursor', `${kNumber} is not in this snapshot, so the export cannot resume after it; use the cursor of the last part.`);
  }
  return sortKey(index, d, sort, scoreOf(d));
}

async function* exportChunks(
  snapshot: Snapshot,
  index: SearchIndex,
  docs: Uint32Array,
  csv: boolean,
  batchSize: number,
  lend: boolean,
  tables: HeldTable,
  sliced: SlicedTurn | undefined,
): AsyncGenerator<Uint8Array> {
  const turn = sliced?.turn;
  const slices = sliced ? { every: sliced.every, pause: sliced.due } : undefined;
  if (csv) yield encoder.encode(CSV_HEAD);
  // One batch's record bytes, in K number order, in a buffer kept from batch to batch.
  let arena = new Uint8Array(4 * 1024 * 1024);
  const starts = new Uint32Array(batchSize);
  const ends = new Uint32Array(batchSize);
  // The chunk going out: one buffer kept from batch to batch when chunks are lent, else a new one each batch.
  let sink = new ByteSink(0);
  let out = new Uint8Array(0);
  // The batches ahead, in K number order; once reads are slow, their shards are hinted to the storage (each once an
  // export), so that it can fetch them while the batches before are read and written.
  const hinted = new Set<string>();
  const ahead: Batch[] = [];
  let cold = false;
  const reads: ReadCounts = { reads: 0, slow: 0 };
  for (let at = 0; at < docs.length; at += batchSize) {
    await turn?.();
    while (ahead.length < PREFETCH_AHEAD && at + ahead.length * batchSize < docs.length) {
      const from = at + ahead.length * batchSize;
      ahead.push(batchInKOrder(index, docs.subarray(from, from + batchSize)));
    }
    // A batch that waited on the disk for one read in eight turns the hints on for the rest of the export.
    if (!cold && reads.slow * 8 > reads.reads) cold = true;
    if (cold) {
      // A piece of a batch at a time: the hints of four batches (their shards found, their paths sent to the
      // prefetching thread) are milliseconds of work, which the clock's slices bound like reads.
      for (const batch of ahead) {
        while (batch.hinted < batch.byK.length) {
          snapshot.prefetchRecords(batch.byK.slice(batch.hinted, batch.hinted + HINT_PIECE), hinted);
          batch.hinted += HINT_PIECE;
          await sliced?.due(0);
        }
      }
    }
    const { byK, kOrder } = ahead.shift() as Batch;
    const count = byK.length;
    let used = 0;
    // Past the shared record cache: an export reads each record once, and would push out what other requests use.
    reads.reads = 0;
    reads.slow = 0;
    await snapshot.eachRecordUncached(
      byK,
      (j, bytes) => {
      if (used + bytes.length > arena.length) {
        const grown = new Uint8Array(Math.max(2 * arena.length, used + bytes.length));
        grown.set(arena.subarray(0, used));
        arena = grown;
      }
      arena.set(bytes, used);
      starts[j] = used;
      used += bytes.length;
      ends[j] = used;
      },
      reads,
      tables,
      slices,
    );
    // The records in the request's order: as they are, each followed by a line break (NDJSON), or as CSV rows
    // written from their bytes.
    await turn?.();
    if (csv) {
      if (lend) sink.at = 0;
      else sink = new ByteSink(used);
      for (let i = 0; i < count; i++) {
        if (sliced && i > 0 && i % sliced.every === 0) await sliced.due(sliced.every);
        writeCsvRow(arena, starts[kOrder[i]!]!, ends[kOrder[i]!]!, sink);
      }
      yield sink.take();
      continue;
    }
    if (!lend || out.length < used + count) out = new Uint8Array(lend ? Math.max(used + count, 2 * out.length) : used + count);
    let o = 0;
    for (let i = 0; i < count; i++) {
      const j = kOrder[i]!;
      out.set(arena.subarray(starts[j]!, ends[j]!), o);
      o += ends[j]! - starts[j]!;
      out[o++] = 0x0a;
    }
    yield out.subarray(0, o);
  }
}

/**
 * The host's turn taken per slice: `turn` at once (between batches and their phases); `due`, told the records handed
 * since it was last asked (asked every `every` records or so), takes the turn only once `records` records or `ms`
 * milliseconds have passed since the last one.
 */
type SlicedTurn = { turn: () => Promise<void>; due: (records: number) => Promise<void>; every: number };

const NOT_YET = Promise.resolve();

function slicedTurn(turn: () => Promise<void>, records: number, ms: number, now: () => number): SlicedTurn {
  const every = Math.max(1, Math.min(records, CLOCK_EVERY));
  let since = now();
  let handed = 0;
  const take = () =>
    turn().then(() => {
      since = now();
      handed = 0;
    });
  return {
    turn: take,
    due: (n) => {
      handed += n;
      return handed >= records || now() - since >= ms ? take() : NOT_YET;
    },
    every,
  };
}

/** `hinted`: how many of `byK`, from the first, were hinted to the storage. */
type Batch = { byK: string[]; kOrder: Uint32Array; hinted: number };

/**
 * A batch of records: its K numbers ascending (`byK`, the order records are read in, so that neighbours in
 * a shard are read together), and where each record of the batch is among them (`kOrder`, the order they are sent in).
 */
function batchInKOrder(index: SearchIndex, batch: Uint32Array): Batch {
  const kDigits = index.docKNumber;
  const n = batch.length;
  // K digits and position packed in one number, so a numeric sort orders them.
  const packed = new Float64Array(n);
  for (let i = 0; i < n; i++) packed[i] = kDigits[batch[i]!]! * n + i;
  packed.sort();
  const byK = Array.from(packed, (p) => kNumberText(Math.floor(p / n)));
  const kOrder = new Uint32Array(n);
  for (let j = 0; j < n; j++) kOrder[packed[j]! % n] = j;
  return { byK, kOrder, hinted: 0 };
}

export { CSV_COLUMNS, csvCell } from './csv.ts';
