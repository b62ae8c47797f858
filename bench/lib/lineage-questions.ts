import { lineageNumber } from '../../src/contract/index.ts';
import type { walkLineage } from '../../src/operations/index.ts';

type LineageFiles = Parameters<typeof walkLineage>[0];

/**
 * The most-cited device of a snapshot: the most neighbours in the descendants direction, over every shard. Both
 * lineage benches start from it (its whole descendant tree is their widest question).
 */
export async function mostCited(files: LineageFiles): Promise<{ kNumber: string; count: number }> {
  let cited = { code: -1, count: -1 };
  for (const s of files.index.shards.descendants) {
    const shard = await files.shard('descendants', s.id);
    if (!shard) continue;
    let begin = 0;
    for (let i = 0; i < shard.nodes.length; i++) {
      const end = shard.ends[i] as number;
      if (end - begin > cited.count) cited = { code: shard.nodes[i] as number, count: end - begin };
      begin = end;
    }
  }
  return { kNumber: lineageNumber(cited.code), count: cited.count };
}
