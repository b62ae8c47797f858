import { z } from 'zod';
import { closureEntrySpan, closureLayout } from './lineage-closure-layout.ts';

/**
 * Lineage: which devices a clearance was compared to (its predicates) and which clearances name it, as files of the
 * snapshot (docs/lineage.md). An edge goes from a device to a device it names; it has a kind (`predicate`: a source
 * that read the device's own text says it is a predicate; `named`: a source found the number in the device's
 * documents, which may be a predicate, a reference device or an earlier version) and the short id of its source.
 *
 * Layout, every file listed in the manifest:
 * - `lineage/index.json`: the header below (the origins, what each source gave, every shard with its counts).
 * - `lineage/predicates/<shard>.bin`: for each device of the shard, the devices it names.
 * - `lineage/descendants/<shard>.bin`: for each device of the shard, the devices that name it.
 *
 * A shard holds the devices of 1,000 consecutive numbers (`lineageShardId`: the number without its last three
 * digits, "K123" for K123456, "DEN200" for DEN200012), so a question reads the shards of the devices it meets and no
 * other. Both directions list every device of the shard that has an edge either way (with no neighbours in a
 * direction where it has none), so a walk learns each device's year from the shard it reads for its neighbours.
 *
 * A shard file, little-endian, every section starting at a multiple of 4:
 * - u32 `nodes`, u32 `edges`;
 * - u32[nodes]: the devices' codes, ascending (`lineageCode`);
 * - u32[nodes]: the end of each device's neighbours in the edge list (its start is the previous device's end);
 * - u32[edges]: each neighbour, `code | origin << 21` (`origin` indexes `origins` of the header), ascending by code
 *   then origin; one entry per origin when several sources give the same edge;
 * - u16[nodes]: the device's decision year, 0 when the snapshot has no record of it or the record no decision date,
 *   with bit 15 set when the snapshot has a record of it; two bytes of padding when `nodes` is odd.
 *
 * Closure files (`lineage/closure/<direction>/<shard>.bin`, one for each shard of the header; a snapshot built before
 * them has none, and the header does not change): for each device of the shard, the answer of its whole lineage in
 * the direction (every kind, the whole chain), walked at build time, so that a reader for whom each step of a walk
 * costs a round trip (the page on a phone) reads a device's whole lineage in one file. A lineage of more than
 * LINEAGE_CLOSURE_MAX devices is not stored (the reader walks the shards). Little-endian:
 * - u32 `count`: the shard's devices (as its shards list them); u16[count]: each one's code modulo 1,000, ascending,
 *   with two bytes of padding when `count` is odd; u32[count]: the end of each device's entry in the entries that
 *   follow (its start is the previous device's end), in bytes from the entries' start;
 * - the entries, unsigned LEB128 numbers: `n + 1` (0: more than LINEAGE_CLOSURE_MAX devices, not stored); then the `n`
 *   devices of the answer in its order, each as three numbers:
 *   - `delta × 2 + newStep`: newStep is 1 for the first device of a step, and then `delta` is its code; else `delta`
 *     is the code's difference from the device before it;
 *   - `back × origins + origin`: `back` counts from the device's own place back to its via's (the start is place 0,
 *     the answer's devices 1 to n), `origins` is the header's number of origins;
 *   - its info: `hasRecord + 2 × y`, y 0 for no decision year, else 1 + the zigzag of the year's difference from the
 *     last year given before it in the entry (from 2000 for the first);
 *   then the number of cycles, and each cycle's device and via (places, 0 the start) and origin.
 */
export const LINEAGE_INDEX_PATH = 'lineage/index.json';
export const LINEAGE_FORMAT = 'device-510k-lineage';
export const LINEAGE_VERSION = 1;
export const LINEAGE_DIRECTIONS = ['predicates', 'descendants'] as const;
export type LineageDirection = (typeof LINEAGE_DIRECTIONS)[number];
export const EDGE_KINDS = ['predicate', 'named'] as const;
export type EdgeKind = (typeof EDGE_KINDS)[number];

/** K numbers and De Novo numbers, as edges name them. */
export const DEVICE_NUMBER = /^(K|DEN)\d{6}$/;
/** Codes: DEN numbers below K numbers, so that codes sort as the numbers' text does. */
const K_BASE = 1_000_000;
export const CODE_BITS = 21;
const CODE_MASK = (1 << CODE_BITS) - 1;
/** Origins an edge's 11 high bits can name. */
export const MAX_ORIGINS = 1 << (32 - CODE_BITS);
export const HAS_RECORD = 0x8000;

export function lineageCode(number: string): number {
  return number.charCodeAt(0) === 75 /* K */ ? K_BASE + Number(number.slice(1)) : Number(number.slice(3));
}
export function lineageNumber(code: number): string {
  return code >= K_BASE ? `K${String(code - K_BASE).padStart(6, '0')}` : `DEN${String(code).padStart(6, '0')}`;
}
export const edgeCode = (edge: number): number => edge & CODE_MASK;
export const edgeOrigin = (edge: number): number => edge >>> CODE_BITS;

export function lineageShardId(number: string): string {
  return number.slice(0, number.length - 3);
}
export function lineageShardPath(direction: LineageDirection, shardId: string): string {
  return `lineage/${direction}/${shardId}.bin`;
}

export const SourceId = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,39}$/, { error: 'must be 1 to 40 lower-case letters, digits, ".", "_" or "-"' });

/** `source.json` of an edge input folder (beside its `predicates.csv`). */
export const EdgeSourceFile = z.strictObject({
  source: SourceId,
  kind: z.enum(EDGE_KINDS, { error: 'must be "predicate" or "named"' }),
  report: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*\.csv$/, { error: 'must be the name of a .csv file beside source.json' })
    .optional(),
});
export type EdgeSourceFile = z.infer<typeof EdgeSourceFile>;

export const LineageOrigin = z.strictObject({ source: SourceId, kind: z.enum(EDGE_KINDS) });
export type LineageOrigin = z.infer<typeof LineageOrigin>;

export const LineageSourceSummary = z.strictObject({
  source: SourceId,
  kind: z.enum(EDGE_KINDS),
  /** sha256 of the edge file's bytes. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  rows: z.int().min(0),
  /** Distinct edges kept from this source. */
  edges: z.int().min(0),
  /** Named edges left out because a predicate source read the device's own text (docs/lineage.md). */
  superseded: z.int().min(0),
  /** Rows not kept, by reason (a number that is not a K or DEN number, a row given twice). */
  skipped: z.record(z.string(), z.int().min(1)),
  /** Devices whose text the source's report marks `read` (predicate sources with a report). */
  devicesRead: z.int().min(0).nullable(),
});
export type LineageSourceSummary = z.infer<typeof LineageSourceSummary>;

export const LineageShardEntry = z.strictObject({ id: z.string(), nodes: z.int().min(1), edges: z.int().min(0) });

/**
 * Devices a closure entry holds at most: a lineage past it is walked. A longer lineage costs bytes in every closure
 * file it is part of; within this bound the lineage files stay under a tenth of a 1,000,000-record snapshot, and
 * all but about 1 % of its lineages are held.
 */
export const LINEAGE_CLOSURE_MAX = 200;

export function lineageClosurePath(direction: LineageDirection, shardId: string): string {
  return `lineage/closure/${direction}/${shardId}.bin`;
}
/** The year a closure entry's first year is told from. */
export const CLOSURE_YEAR_BASE = 2000;

export const LineageIndex = z.strictObject({
  format: z.literal(LINEAGE_FORMAT),
  version: z.literal(LINEAGE_VERSION),
  /** Kind and source of each origin an edge names, predicate sources first, then by source id. */
  origins: z.array(LineageOrigin).max(MAX_ORIGINS),
  sources: z.array(LineageSourceSummary),
  /** Distinct device → device pairs, and devices with at least one edge. */
  edges: z.int().min(0),
  devices: z.int().min(0),
  shards: z.strictObject({
    predicates: z.array(LineageShardEntry),
    descendants: z.array(LineageShardEntry),
  }),
});
export type LineageIndex = z.infer<typeof LineageIndex>;

/** One shard's devices and their neighbours in one direction, as typed arrays over the file's bytes. */
export type LineageShard = {
  nodes: Uint32Array;
  ends: Uint32Array;
  edges: Uint32Array;
  info: Uint16Array;
  bytes: number;
};

/** The file's bytes as a shard; throws on bytes that cannot be one (the manifest's digest was checked before). */
export function decodeLineageShard(bytes: Uint8Array): LineageShard {
  // Typed arrays need their offsets aligned: a copy when the bytes do not start at a multiple of 4.
  const own = bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
  if (own.length < 8) throw new Error('lineage shard shorter than its header');
  const head = new Uint32Array(own.buffer, own.byteOffset, 2);
  const n = head[0] as number;
  const m = head[1] as number;
  const expected = 8 + 8 * n + 4 * m + 2 * n + (n % 2) * 2;
  if (own.length !== expected) throw new Error(`lineage shard of ${n} devices and ${m} edges must be ${expected} bytes, not ${own.length}`);
  const at = own.byteOffset + 8;
  return {
    nodes: new Uint32Array(own.buffer, at, n),
    ends: new Uint32Array(own.buffer, at + 4 * n, n),
    edges: new Uint32Array(own.buffer, at + 8 * n, m),
    info: new Uint16Array(own.buffer, at + 8 * n + 4 * m, n),
    bytes: own.length,
  };
}

/**
 * One device's whole lineage in a direction, in answer order (by depth, then number): parallel arrays, one entry per
 * device reached. A closure entry holds it; the walk answers it.
 */
export type LineageClosure = {
  codes: number[];
  depths: number[];
  vias: number[];
  origins: number[];
  /** Each device's entry info: its decision year (low 15 bits, 0 when none) and HAS_RECORD. */
  infos: number[];
  /** Edges that lead back into a cycle: from `via` to `code`, already reached (or the start), each once. */
  cycles: { code: number; via: number; origin: number }[];
};

class ClosureReader {
  at: number;
  constructor(
    private readonly bytes: Uint8Array,
    at: number,
    private readonly end: number,
  ) {
    this.at = at;
  }
  next(): number {
    let value = 0;
    let scale = 1;
    for (;;) {
      if (this.at >= this.end) throw new Error('lineage closure entry ends within a number');
      const b = this.bytes[this.at++] as number;
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
      scale *= 128;
      if (scale > 2 ** 35) throw new Error('lineage closure entry has a number too long');
    }
  }
}

/**
 * A device's closure entry from a closure file's bytes (`origins`: the header's number of origins): its lineage,
 * `'walk'` when the entry says it is too long to be stored, or null when the file has no entry for the device. Throws
 * on bytes that cannot be a closure file.
 */
export function decodeLineageClosure(bytes: Uint8Array, start: number, origins: number): LineageClosure | 'walk' | null {
  origins = Math.max(1, origins);
  if (bytes.length < 4) throw new Error('lineage closure file shorter than its header');
  const { count, base } = closureLayout(bytes);
  if (bytes.length < base) throw new Error(`lineage closure file of ${count} devices is shorter than its tables`);
  const span = closureEntrySpan(bytes, count, start % 1000);
  if (span === null) return null;
  const from = base + span.from;
  const to = base + span.to;
  if (to > bytes.length || from > to) throw new Error('lineage closure entry past the end of its file');
  const r = new ClosureReader(bytes, from, to);
  const stored = r.next();
  if (stored === 0) return 'walk';
  const n = stored - 1;
  const out: LineageClosure = { codes: new Array(n), depths: new Array(n), vias: new Array(n), origins: new Array(n), infos: new Array(n), cycles: [] };
  const codeAt = (place: number): number => {
    if (place < 0 || place > n) throw new Error('lineage closure entry names a place outside its lineage');
    return place === 0 ? start : (out.codes[place - 1] as number);
  };
  let depth = 0;
  let code = 0;
  let year = CLOSURE_YEAR_BASE;
  for (let i = 0; i < n; i++) {
    const step = r.next();
    if (step % 2 === 1) {
      depth++;
      code = 0;
    }
    code += Math.floor(step / 2);
    out.codes[i] = code;
    out.depths[i] = depth;
    const via = r.next();
    out.vias[i] = codeAt(i + 1 - Math.floor(via / origins));
    out.origins[i] = via % origins;
    const info = r.next();
    const y = Math.floor(info / 2);
    if (y > 0) year += (y - 1) % 2 === 0 ? (y - 1) / 2 : -y / 2;
    if (year < 0 || year >= HAS_RECORD) throw new Error('lineage closure entry gives a year out of range');
    out.infos[i] = (y > 0 ? year : 0) | (info % 2 === 1 ? HAS_RECORD : 0);
  }
  const cycles = r.next();
  for (let c = 0; c < cycles; c++) {
    const at = codeAt(r.next());
    const via = codeAt(r.next());
    out.cycles.push({ code: at, via, origin: r.next() });
  }
  if (r.at !== to) throw new Error('lineage closure entry longer than its lineage');
  return out;
}

/** K or DEN followed by six digits, case-insensitive, surrounding spaces ignored. */
export const DeviceNumberInput = z
  .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') })
  .regex(/^\s*([Kk]|[Dd][Ee][Nn])\d{6}\s*$/, { error: 'must be K or DEN followed by six digits' })
  .transform((s) => s.trim().toUpperCase());

export const MAX_LINEAGE_DEPTH = 50;
export const MAX_LINEAGE_LIMIT = 500;
