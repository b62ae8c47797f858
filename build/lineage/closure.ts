import {
  HAS_RECORD,
  LINEAGE_DIRECTIONS,
  LINEAGE_INDEX_PATH,
  LINEAGE_CLOSURE_MAX,
  CLOSURE_YEAR_BASE,
  lineageClosurePath,
  lineageNumber,
  type LineageIndex,
} from '../../src/contract/index.ts';
import { LineageFiles, walkLineage, type LineageWalk } from '../../src/operations/lineage-walk.ts';
import type { SnapshotWriter } from '../write/writer.ts';
import { shardRuns } from './shard-runs.ts';

/** Unsigned LEB128 numbers into a growing byte list. */
class Bytes {
  data = new Uint8Array(1 << 16);
  length = 0;
  number(value: number): void {
    if (!Number.isSafeInteger(value) || value < 0) throw new Error(`a closure entry cannot hold ${value}`);
    do {
      if (this.length === this.data.length) {
        const bigger = new Uint8Array(this.data.length * 2);
        bigger.set(this.data);
        this.data = bigger;
      }
      const low = value % 128;
      value = Math.floor(value / 128);
      this.data[this.length++] = value > 0 ? low | 0x80 : low;
    } while (value > 0);
  }
}

/** One device's entry (src/contract/lineage.ts): its whole lineage, or 0 when it has more than `max` devices. */
function encodeEntry(out: Bytes, start: number, walk: LineageWalk, max: number, origins: number): void {
  const n = walk.codes.length;
  if (n > max) return out.number(0);
  out.number(n + 1);
  const place = new Map<number, number>([[start, 0]]);
  let depth = 0;
  let last = 0;
  let year = CLOSURE_YEAR_BASE;
  for (let i = 0; i < n; i++) {
    const code = walk.codes[i] as number;
    const d = walk.depths[i] as number;
    if (d !== depth && d !== depth + 1) throw new Error(`the walk from ${lineageNumber(start)} skips a step`);
    const newStep = d === depth + 1;
    if (newStep) last = 0;
    if (code <= last) throw new Error(`the walk from ${lineageNumber(start)} is not in code order within a step`);
    out.number((code - last) * 2 + (newStep ? 1 : 0));
    const via = place.get(walk.vias[i] as number);
    const origin = walk.origins[i] as number;
    if (via === undefined) throw new Error(`the walk from ${lineageNumber(start)} reaches ${lineageNumber(code)} via a device not before it`);
    if (origin >= origins) throw new Error(`the walk from ${lineageNumber(start)} names origin ${origin} of ${origins}`);
    out.number((i + 1 - via) * origins + origin);
    const info = walk.infos[i] as number;
    const y = info & ~HAS_RECORD;
    const has = info & HAS_RECORD ? 1 : 0;
    if (y === 0) out.number(has);
    else {
      const delta = y - year;
      out.number(has + 2 * (1 + (delta >= 0 ? 2 * delta : -2 * delta - 1)));
      year = y;
    }
    place.set(code, i + 1);
    depth = d;
    last = code;
  }
  out.number(walk.cycles.length);
  for (const c of walk.cycles) {
    const at = place.get(c.code);
    const via = place.get(c.via);
    if (at === undefined || via === undefined) throw new Error(`a cycle of the walk from ${lineageNumber(start)} leaves its lineage`);
    out.number(at);
    out.number(via);
    out.number(c.origin);
  }
}

/**
 * The closure files of both directions: every device with an edge walks its whole lineage, with the service's own
 * walk over the shards just written (`shardBytes`: each written lineage file's bytes by path), so that an entry is
 * the operation's answer by construction. `devices` ascending. Returns the files written.
 */
export async function writeClosures(
  index: LineageIndex,
  shardBytes: Map<string, Uint8Array>,
  devices: Uint32Array,
  writer: SnapshotWriter,
  max = LINEAGE_CLOSURE_MAX,
): Promise<{ predicates: number; descendants: number }> {
  // An entry's via and origin are one number: with no origin (no edge at all) there is no entry either.
  const origins = Math.max(1, index.origins.length);
  const header = new TextEncoder().encode(JSON.stringify(index));
  const read = (path: string) => {
    if (path === LINEAGE_INDEX_PATH) return Promise.resolve(header);
    const bytes = shardBytes.get(path);
    return bytes ? Promise.resolve(bytes) : Promise.reject(new Error(`no lineage file ${path}`));
  };
  // Every shard is read once, however many walks need it: nothing is evicted.
  const files = await LineageFiles.open(read, () => true, Number.MAX_SAFE_INTEGER);
  if (files === null) throw new Error('the lineage header is missing');
  const written = { predicates: 0, descendants: 0 };
  for (const direction of LINEAGE_DIRECTIONS) {
    for (const { start: d, end, id } of shardRuns(devices)) {
      const count = end - d;
      const entries = new Bytes();
      const ends: number[] = [];
      for (let i = d; i < end; i++) {
        const code = devices[i] as number;
        encodeEntry(entries, code, await walkLineage(files, { id: lineageNumber(code), direction, depth: null, kinds: null }), max, origins);
        ends.push(entries.length);
      }
      const endsAt = 4 + 2 * count + (count % 2) * 2;
      const base = endsAt + 4 * count;
      const bytes = new Uint8Array(base + entries.length);
      const view = new DataView(bytes.buffer);
      view.setUint32(0, count, true);
      for (let i = 0; i < count; i++) {
        view.setUint16(4 + 2 * i, (devices[d + i] as number) % 1000, true);
        view.setUint32(endsAt + 4 * i, ends[i] as number, true);
      }
      bytes.set(entries.data.subarray(0, entries.length), base);
      writer.writeBytes(lineageClosurePath(direction, id), bytes);
      written[direction]++;
    }
  }
  return written;
}
