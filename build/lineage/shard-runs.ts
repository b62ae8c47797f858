import { lineageNumber, lineageShardId } from '../../src/contract/index.ts';

/**
 * The runs of `devices` (lineage codes, ascending) that share a lineage shard (1,000 consecutive numbers): each run's
 * first index, the index past its last, and the shard's id. Every file of a direction is written one run at a time.
 */
export function* shardRuns(devices: Uint32Array): Generator<{ start: number; end: number; id: string }> {
  let start = 0;
  while (start < devices.length) {
    const shard = Math.floor((devices[start] as number) / 1000);
    let end = start;
    while (end < devices.length && Math.floor((devices[end] as number) / 1000) === shard) end++;
    yield { start, end, id: lineageShardId(lineageNumber(devices[start] as number)) };
    start = end;
  }
}
