import {
  HAS_RECORD,
  LINEAGE_INDEX_PATH,
  LineageIndex,
  decodeLineageShard,
  edgeCode,
  edgeOrigin,
  lineageCode,
  lineageNumber,
  lineageShardId,
  lineageShardPath,
  type EdgeKind,
  type LineageDirection,
  type LineageShard,
} from '../contract/index.ts';
import { LruCache } from '../utils/lru.ts';

/**
 * The lineage walk over the snapshot's lineage files, with nothing of any host in it: it is given a function that
 * reads one of the snapshot's files (checked against the manifest by whoever reads it), so the Node server, the
 * Worker and a page with no server run the same code over the same files and give the same answer.
 */

/** Reads a file of the snapshot by its path, checked against the manifest. */
export type ReadLineageFile = (path: string) => Promise<Uint8Array>;

export type LineageQuestion = {
  id: string;
  direction: LineageDirection;
  /** Steps from the start, or null for the whole chain. */
  depth: number | null;
  /** Kinds of edge followed, or null for every kind. */
  kinds: readonly EdgeKind[] | null;
};

/** A walk's answer, in answer order (by depth, then number): parallel arrays, one entry per device reached. */
export type LineageWalk = {
  /** Whether the start has an edge in either direction. */
  known: boolean;
  codes: number[];
  depths: number[];
  vias: number[];
  origins: number[];
  /** Each device's entry info: its decision year (low 15 bits, 0 when none) and HAS_RECORD. */
  infos: number[];
  /** Edges that lead back into a cycle: from `via` to `code`, already reached (or the start), each once. */
  cycles: { code: number; via: number; origin: number }[];
};

const utf8 = new TextDecoder();

/** 32 MiB of decoded shards: at 1,000,000 records one direction's shards take about 18 MB. */
export const DEFAULT_LINEAGE_CACHE_BYTES = 32 * 1024 * 1024;

/** The lineage files of one snapshot: the header, read once, and shards decoded on first use and kept by weight. */
export class LineageFiles {
  readonly index: LineageIndex;
  private readonly read: ReadLineageFile;
  private readonly shardIds: Set<string>;
  private readonly cache: LruCache<string, Promise<LineageShard>>;
  /** Each shard's file size, from the header: a shard is weighed before its bytes are read. */
  private readonly sizes = new Map<string, number>();
  private readonly weights = new WeakMap<Promise<LineageShard>, number>();

  private constructor(index: LineageIndex, read: ReadLineageFile, cacheBytes: number) {
    this.index = index;
    this.read = read;
    this.shardIds = new Set(index.shards.predicates.map((s) => s.id));
    for (const direction of ['predicates', 'descendants'] as const) {
      for (const s of index.shards[direction]) this.sizes.set(`${direction}/${s.id}`, 8 + 10 * s.nodes + 4 * s.edges + 2 * (s.nodes % 2));
    }
    this.cache = new LruCache<string, Promise<LineageShard>>(cacheBytes, (p) => this.weights.get(p) ?? 64);
  }

  /** The lineage files of a snapshot, or null when it has none (one built before lineage was part of snapshots). */
  static async open(read: ReadLineageFile, has: (path: string) => boolean, cacheBytes = DEFAULT_LINEAGE_CACHE_BYTES): Promise<LineageFiles | null> {
    if (!has(LINEAGE_INDEX_PATH)) return null;
    const index = LineageIndex.parse(JSON.parse(utf8.decode(await read(LINEAGE_INDEX_PATH))));
    return new LineageFiles(index, read, cacheBytes);
  }

  /** A shard of a direction, decoded, or null when no device of that shard has an edge. */
  shard(direction: LineageDirection, shardId: string): Promise<LineageShard> | null {
    if (!this.shardIds.has(shardId)) return null;
    const key = `${direction}/${shardId}`;
    const held = this.cache.get(key);
    if (held) return held;
    const loading = this.read(lineageShardPath(direction, shardId)).then(decodeLineageShard);
    this.weights.set(loading, this.sizes.get(key) ?? 64);
    this.cache.set(key, loading);
    // A failed read is not kept: the next question reads the file again (and reports it again if it is damaged).
    loading.catch(() => {
      if (this.cache.get(key) === loading) this.cache.delete(key);
    });
    return loading;
  }
}

/** Position of `code` in a shard's devices, or -1. */
function find(shard: LineageShard, code: number): number {
  let lo = 0;
  let hi = shard.nodes.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((shard.nodes[mid] as number) < code) lo = mid + 1;
    else hi = mid;
  }
  return lo < shard.nodes.length && shard.nodes[lo] === code ? lo : -1;
}

const shardOf = (code: number): string => lineageShardId(lineageNumber(code));

/** Each code's shard, loaded together: every distinct shard once. */
async function shardsFor(files: LineageFiles, direction: LineageDirection, codes: readonly number[]): Promise<Map<string, LineageShard | null>> {
  const ids = [...new Set(codes.map(shardOf))];
  const loaded = await Promise.all(ids.map((id) => files.shard(direction, id)));
  return new Map(ids.map((id, i) => [id, loaded[i] ?? null]));
}

/**
 * Breadth first from the start: each level's devices in ascending order, each device reached once, at the depth
 * it is first reached, `via` the smallest device of the level before that names it (or that it names), the edge's
 * origin the first of that pair's origins whose kind is followed. Edges into a device already reached are kept
 * aside, and those whose ends lie on one cycle of the walked edges are the answer's cycles.
 */
export async function walkLineage(files: LineageFiles, question: LineageQuestion): Promise<LineageWalk> {
  const { direction } = question;
  const follows = files.index.origins.map((o) => question.kinds === null || question.kinds.includes(o.kind));
  const start = lineageCode(question.id);
  const walk: LineageWalk = { known: false, codes: [], depths: [], vias: [], origins: [], infos: [], cycles: [] };
  const startShard = await files.shard(direction, shardOf(start));
  if (!startShard || find(startShard, start) < 0) return walk;
  walk.known = true;

  /** Position in the answer by code; the start is -1. */
  const reached = new Map<number, number>([[start, -1]]);
  /** Edges into devices already reached: candidates for cycles. */
  const back: { from: number; to: number; origin: number }[] = [];
  /** Each reached device's edges followed (tree and back), for the cycle check. */
  const out = new Map<number, number[]>();
  let level = [start];
  let depth = 0;
  while (level.length > 0 && (question.depth === null || depth < question.depth)) {
    const shards = await shardsFor(files, direction, level);
    const found = new Map<number, { via: number; origin: number }>();
    for (const from of level) {
      const shard = shards.get(shardOf(from));
      const at = shard ? find(shard, from) : -1;
      if (!shard || at < 0) continue;
      const begin = at === 0 ? 0 : (shard.ends[at - 1] as number);
      const end = shard.ends[at] as number;
      let last = -1;
      const followed: number[] = [];
      for (let e = begin; e < end; e++) {
        const edge = shard.edges[e] as number;
        const to = edgeCode(edge);
        const origin = edgeOrigin(edge);
        // A pair's origins are consecutive, the strongest first: the first followed one stands for the pair.
        if (to === last || !follows[origin]) continue;
        last = to;
        followed.push(to);
        if (reached.has(to)) back.push({ from, to, origin });
        else if (!found.has(to)) found.set(to, { via: from, origin });
        else back.push({ from, to, origin });
      }
      out.set(from, followed);
    }
    depth++;
    const next = [...found.keys()].sort((a, b) => a - b);
    for (const code of next) {
      const { via, origin } = found.get(code) as { via: number; origin: number };
      reached.set(code, walk.codes.length);
      walk.codes.push(code);
      walk.depths.push(depth);
      walk.vias.push(via);
      walk.origins.push(origin);
      walk.infos.push(0);
    }
    level = next;
  }
  // The info of every device reached (those of the last level were not expanded, so their shards may not be read).
  const all = await shardsFor(files, direction, walk.codes);
  walk.codes.forEach((code, i) => {
    const shard = all.get(shardOf(code));
    const at = shard ? find(shard, code) : -1;
    if (shard && at >= 0) walk.infos[i] = shard.info[at] as number;
  });
  // A back edge from a device reached within the same level as its target (a second path of equal length) was met
  // before the target entered the answer: it is a back edge all the same.
  const component = components(start, walk.codes, out);
  for (const b of back) {
    if (component.get(b.from) === component.get(b.to)) walk.cycles.push({ code: b.to, via: b.from, origin: b.origin });
  }
  walk.cycles.sort((a, b) => a.via - b.via || a.code - b.code);
  return walk;
}

/** The strongly connected component of each device of the walk (iterative Tarjan over the followed edges). */
function components(start: number, codes: readonly number[], out: ReadonlyMap<number, readonly number[]>): Map<number, number> {
  const index = new Map<number, number>();
  const low = new Map<number, number>();
  const comp = new Map<number, number>();
  const stack: number[] = [];
  const onStack = new Set<number>();
  let counter = 0;
  let next = 0;
  for (const root of [start, ...codes]) {
    if (index.has(root)) continue;
    const work: { v: number; i: number }[] = [{ v: root, i: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1] as { v: number; i: number };
      const edges = out.get(frame.v) ?? [];
      if (frame.i < edges.length) {
        const w = edges[frame.i++] as number;
        if (!index.has(w)) {
          index.set(w, counter);
          low.set(w, counter++);
          stack.push(w);
          onStack.add(w);
          work.push({ v: w, i: 0 });
        } else if (onStack.has(w)) low.set(frame.v, Math.min(low.get(frame.v) as number, index.get(w) as number));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.v, Math.min(low.get(parent.v) as number, low.get(frame.v) as number));
      if (low.get(frame.v) === index.get(frame.v)) {
        let w: number;
        do {
          w = stack.pop() as number;
          onStack.delete(w);
          comp.set(w, next);
        } while (w !== frame.v);
        next++;
      }
    }
  }
  return comp;
}

/** Position of the first device of the walk after (depth, code), for a keyset cursor. */
export function positionAfter(walk: LineageWalk, depth: number, code: number): number {
  let lo = 0;
  let hi = walk.codes.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const d = walk.depths[mid] as number;
    if (d < depth || (d === depth && (walk.codes[mid] as number) <= code)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Counts over the whole walk: by depth ascending, and by decision year ascending with devices of no year last. */
export function lineageCounts(walk: LineageWalk): { byDepth: { depth: number; count: number }[]; byYear: { year: number | null; count: number }[] } {
  const depths = new Map<number, number>();
  const years = new Map<number, number>();
  walk.depths.forEach((d, i) => {
    depths.set(d, (depths.get(d) ?? 0) + 1);
    const year = (walk.infos[i] as number) & ~HAS_RECORD;
    years.set(year, (years.get(year) ?? 0) + 1);
  });
  const byDepth = [...depths].sort((a, b) => a[0] - b[0]).map(([depth, count]) => ({ depth, count }));
  const byYear = [...years]
    .sort((a, b) => (a[0] === 0 ? 1 : b[0] === 0 ? -1 : a[0] - b[0]))
    .map(([year, count]) => ({ year: year === 0 ? null : year, count }));
  return { byDepth, byYear };
}
