import {
  CODE_BITS,
  HAS_RECORD,
  LINEAGE_CLOSURE_MAX,
  LINEAGE_FORMAT,
  LINEAGE_INDEX_PATH,
  LINEAGE_VERSION,
  LineageIndex,
  lineageCode,
  lineageShardPath,
  type ClearanceRecord,
  type LineageDirection,
} from '../../src/contract/index.ts';
import type { SnapshotWriter } from '../write/writer.ts';
import { writeClosures } from './closure.ts';
import { shardRuns } from './shard-runs.ts';
import { distinctPairs, keyFrom, keyOrigin, keyTo, mergeEdges, type EdgeKeys, type MergedEdges } from './merge.ts';
import type { EdgeInput } from './read.ts';

/** What a device's entry says of it: its decision year, and whether the snapshot has its record. */
function infoByCode(records: readonly ClearanceRecord[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const r of records) {
    const year = r.decisionDate === null ? 0 : Number(r.decisionDate.slice(0, 4));
    out.set(lineageCode(r.kNumber), HAS_RECORD | (year > 0 && year < HAS_RECORD ? year : 0));
  }
  return out;
}

/** One direction's shard files: each shard's devices (all devices with an edge either way) with their neighbours. */
function writeDirection(
  direction: LineageDirection,
  keys: EdgeKeys,
  devices: Uint32Array,
  info: Map<number, number>,
  writer: SnapshotWriter,
  written: Map<string, Uint8Array>,
): { id: string; nodes: number; edges: number }[] {
  const shards: { id: string; nodes: number; edges: number }[] = [];
  let k = 0;
  for (const { start: d, end, id } of shardRuns(devices)) {
    const n = end - d;
    const firstKey = k;
    let m = 0;
    for (let j = d; j < end; j++) while (k + m < keys.length && keyFrom(keys[k + m] as number) === devices[j]) m++;
    const bytes = new Uint8Array(8 + 8 * n + 4 * m + 2 * n + (n % 2) * 2);
    const view = new DataView(bytes.buffer);
    view.setUint32(0, n, true);
    view.setUint32(4, m, true);
    let at = firstKey;
    for (let i = 0; i < n; i++) {
      const code = devices[d + i] as number;
      view.setUint32(8 + 4 * i, code, true);
      while (at < keys.length && keyFrom(keys[at] as number) === code) {
        const key = keys[at] as number;
        view.setUint32(8 + 8 * n + 4 * (at - firstKey), (keyTo(key) | (keyOrigin(key) << CODE_BITS)) >>> 0, true);
        at++;
      }
      view.setUint32(8 + 4 * n + 4 * i, at - firstKey, true);
      view.setUint16(8 + 8 * n + 4 * m + 2 * i, info.get(code) ?? 0, true);
    }
    k = at;
    writer.writeBytes(lineageShardPath(direction, id), bytes);
    written.set(lineageShardPath(direction, id), bytes);
    shards.push({ id, nodes: n, edges: m });
  }
  return shards;
}

/**
 * The lineage files of the snapshot (src/contract/lineage.ts): the header, each direction's shards and closure
 * files. With no edge input the header says so and no shard is written. `merged` is the inputs' merge, when the
 * caller made it (the search index reads the same edges).
 */
export async function writeLineage(
  inputs: readonly EdgeInput[],
  records: readonly ClearanceRecord[],
  writer: SnapshotWriter,
  merged: MergedEdges = mergeEdges(inputs),
  closureMax = LINEAGE_CLOSURE_MAX,
): Promise<LineageIndex> {
  const info = infoByCode(records);
  const written = new Map<string, Uint8Array>();
  const index: LineageIndex = {
    format: LINEAGE_FORMAT,
    version: LINEAGE_VERSION,
    origins: merged.origins,
    sources: inputs.map((input, i) => {
      const stats = merged.perInput[i] as (typeof merged.perInput)[number];
      const skipped = { ...input.skipped };
      if (stats.repeated > 0) skipped['row given twice'] = stats.repeated;
      return {
        source: input.source,
        kind: input.kind,
        sha256: input.sha256,
        rows: input.rows,
        edges: stats.edges,
        superseded: stats.superseded,
        skipped,
        devicesRead: input.read === null ? null : input.read.size,
      };
    }),
    edges: distinctPairs(merged.forward),
    devices: merged.devices.length,
    shards: {
      predicates: writeDirection('predicates', merged.forward, merged.devices, info, writer, written),
      descendants: writeDirection('descendants', merged.reverse, merged.devices, info, writer, written),
    },
  };
  writer.writeJson(LINEAGE_INDEX_PATH, LineageIndex, index);
  await writeClosures(index, written, merged.devices, writer, closureMax);
  return index;
}
