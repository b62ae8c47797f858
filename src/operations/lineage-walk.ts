import {
  CODE_BITS,
  HAS_RECORD,
  LINEAGE_DIRECTIONS,
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
  type LineageClosure,
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

/** A walk's answer, in answer order (by depth, then number), as a closure entry holds it (LineageClosure). */
export type LineageWalk = LineageClosure & {
  /** Whether the start has an edge in either direction. */
  known: boolean;
};

const utf8 = new TextDecoder();

/** 32 MiB of decoded shards: at 1,000,000 records one direction's shards take about 18 MB. */
export const DEFAULT_LINEAGE_CACHE_BYTES = 32 * 1024 * 1024;

/**
 * Shards by number: a code's number without its last three digits (K123456 → 1123, DEN200012 → 200), so that a walk
 * finds a device's shard by arithmetic, with no string made per device. K codes start at 1,000,000, so K shards
 * (1000 up) and DEN shards (below 1000) never meet; the number names the same 1,000 numbers as `lineageShardId`.
 */
const SHARD_SPAN = 1000;
const SHARD_COUNT = Math.ceil((1 << CODE_BITS) / SHARD_SPAN);
const shardNumberOf = (code: number): number => Math.floor(code / SHARD_SPAN);
const shardNumberOfId = (id: string): number => shardNumberOf(lineageCode(`${id}000`));
const DIRECTION_OFFSET = { predicates: 0, descendants: SHARD_COUNT } as const;

/** The lineage files of one snapshot: the header, read once, and shards decoded on first use and kept by weight. */
export class LineageFiles {
  readonly index: LineageIndex;
  private readonly read: ReadLineageFile;
  /** Whether a shard number has devices with edges (the same shards in both directions). */
  private readonly present = new Uint8Array(SHARD_COUNT);
  /** Keyed by direction offset + shard number. */
  private readonly cache: LruCache<number, Promise<LineageShard>>;
  /** Each shard's weight, from the header: its file's size and its positions table (a shard is weighed before its bytes are read). */
  private readonly sizes = new Map<number, number>();
  private readonly weights = new WeakMap<Promise<LineageShard>, number>();

  private constructor(index: LineageIndex, read: ReadLineageFile, cacheBytes: number) {
    this.index = index;
    this.read = read;
    for (const s of index.shards.predicates) this.present[shardNumberOfId(s.id)] = 1;
    for (const direction of LINEAGE_DIRECTIONS) {
      for (const s of index.shards[direction]) this.sizes.set(DIRECTION_OFFSET[direction] + shardNumberOfId(s.id), 8 + 10 * s.nodes + 4 * s.edges + 2 * (s.nodes % 2) + 2 * SHARD_SPAN);
    }
    this.cache = new LruCache<number, Promise<LineageShard>>(cacheBytes, (p) => this.weights.get(p) ?? 64);
  }

  /** The lineage files of a snapshot, or null when it has none (one built before lineage was part of snapshots). */
  static async open(read: ReadLineageFile, has: (path: string) => boolean, cacheBytes = DEFAULT_LINEAGE_CACHE_BYTES): Promise<LineageFiles | null> {
    if (!has(LINEAGE_INDEX_PATH)) return null;
    const index = LineageIndex.parse(JSON.parse(utf8.decode(await read(LINEAGE_INDEX_PATH))));
    return new LineageFiles(index, read, cacheBytes);
  }

  /** A shard of a direction by its id ("K123"), decoded, or null when no device of that shard has an edge. */
  shard(direction: LineageDirection, shardId: string): Promise<LineageShard> | null {
    return this.shardByNumber(direction, shardNumberOfId(shardId));
  }

  /** A shard of a direction by its number (`shardNumberOf`), decoded, or null when no device of it has an edge. */
  shardByNumber(direction: LineageDirection, n: number): Promise<LineageShard> | null {
    if (!this.present[n]) return null;
    const key = DIRECTION_OFFSET[direction] + n;
    const held = this.cache.get(key);
    if (held) return held;
    const loading = this.read(lineageShardPath(direction, lineageShardId(lineageNumber(n * SHARD_SPAN)))).then(decodeLineageShard);
    this.weights.set(loading, this.sizes.get(key) ?? 64);
    this.cache.set(key, loading);
    // A failed read is not kept: the next question reads the file again (and reports it again if it is damaged).
    loading.catch(() => {
      if (this.cache.get(key) === loading) this.cache.delete(key);
    });
    return loading;
  }
}

/**
 * Each shard's devices by their last three digits (a shard holds 1,000 consecutive numbers): the position of a device
 * in the shard, or ABSENT. Made on a shard's first use by a walk and kept as long as the shard is: a walk looks up
 * every device it meets, and one read of this table costs less than a binary search over the shard.
 */
const ABSENT = 0xffff;
const positions = new WeakMap<LineageShard, Uint16Array>();
function positionsOf(shard: LineageShard): Uint16Array {
  let table = positions.get(shard);
  if (!table) {
    table = new Uint16Array(SHARD_SPAN).fill(ABSENT);
    const nodes = shard.nodes;
    for (let i = 0; i < nodes.length; i++) table[(nodes[i] as number) % SHARD_SPAN] = i;
    positions.set(shard, table);
  }
  return table;
}

/**
 * The shards one walk reads, by number: each is asked of the files (and so marked recently used) once per walk, and
 * held by the walk until it ends, whatever the cache evicts meanwhile.
 */
class WalkShards {
  private readonly held: (LineageShard | null | undefined)[] = new Array<undefined>(SHARD_COUNT).fill(undefined);
  private readonly tables: (Uint16Array | undefined)[] = new Array<undefined>(SHARD_COUNT).fill(undefined);
  constructor(
    readonly files: LineageFiles,
    private readonly direction: LineageDirection,
  ) {}

  /** Loads the shards of `codes` not yet held (every distinct one once, together). */
  async load(codes: ArrayLike<number>): Promise<void> {
    const wanted: number[] = [];
    const loading: Promise<LineageShard>[] = [];
    for (let i = 0; i < codes.length; i++) {
      const n = shardNumberOf(codes[i] as number);
      if (this.held[n] !== undefined) continue;
      const shard = this.files.shardByNumber(this.direction, n);
      this.held[n] = null;
      if (shard === null) continue;
      wanted.push(n);
      loading.push(shard);
    }
    if (loading.length === 0) return;
    const loaded = await Promise.all(loading);
    wanted.forEach((n, i) => {
      const shard = loaded[i] as LineageShard;
      this.held[n] = shard;
      this.tables[n] = positionsOf(shard);
    });
  }

  /** The held shard of a code, or null when its shard has no device with edges. */
  of(code: number): LineageShard | null {
    return this.held[shardNumberOf(code)] ?? null;
  }

  /** The position of a code in its held shard, or -1. */
  at(code: number): number {
    const table = this.tables[shardNumberOf(code)];
    const at = table === undefined ? ABSENT : (table[code % SHARD_SPAN] as number);
    return at === ABSENT ? -1 : at;
  }
}

/**
 * Per code, its place in the restricted graph of the cycle search (1 + its index there, 0 when it is not in it): a
 * table over every code (2^21 of them, 8 MiB) rather than a Map, read once per edge of that graph with no garbage
 * made. The search runs with no await, so one table serves every walk; each entry set is returned to 0 before it ends.
 */
let places: Int32Array | null = null;

/** A list of 32-bit integers (or doubles) that grows by doubling and is kept between walks (see `Scratch`). */
class IntList {
  data = new Int32Array(1024);
  length = 0;
  push(value: number): void {
    if (this.length === this.data.length) this.grow();
    this.data[this.length++] = value;
  }
  private grow(): void {
    const bigger = new Int32Array(this.data.length * 2);
    bigger.set(this.data);
    this.data = bigger;
  }
}
class DoubleList {
  data = new Float64Array(1024);
  length = 0;
  push(value: number): void {
    if (this.length === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = value;
  }
}

/**
 * A walk's working lists: the bit table of devices met, the followed edges and back edges, a level's new devices.
 * Typed and kept between walks, so that a walk of tens of thousands of devices makes no garbage but its answer:
 * garbage the collector must copy while a walk holds it is what makes a walk's slowest rounds slow. Each walk takes
 * its own (walks overlap while they wait on shard reads) and gives it back when it ends; a walk that fails does not
 * give it back (the bits of the level it was gathering are in no list), so it is dropped.
 */
type Scratch = {
  /** One bit per code: met by the walk (256 KiB); a walk clears the bits it set before giving it back. */
  seen: Uint32Array;
  /** The followed edges (tree and back) of each expanded device, in place order: targets, and each place's end. */
  targets: IntList;
  ends: IntList;
  /** Edges into devices already met: from, to, origin, flat. */
  back: IntList;
  /** A level's devices met for the first time: code × 2^22 + the order met in, and each one's via and origin. */
  keys: DoubleList;
  vias: IntList;
  origins: IntList;
};
const scratches: Scratch[] = [];
const POOLED_SCRATCHES = 4;
function takeScratch(): Scratch {
  const held = scratches.pop();
  if (held) {
    held.targets.length = held.ends.length = held.back.length = 0;
    return held;
  }
  const seen = new Uint32Array((1 << CODE_BITS) >>> 5);
  return { seen, targets: new IntList(), ends: new IntList(), back: new IntList(), keys: new DoubleList(), vias: new IntList(), origins: new IntList() };
}
function giveBack(scratch: Scratch, walk: LineageWalk, start: number): void {
  const seen = scratch.seen;
  seen[start >>> 5] = 0;
  for (const code of walk.codes) seen[code >>> 5] = 0;
  if (scratches.length < POOLED_SCRATCHES) scratches.push(scratch);
}

/**
 * Breadth first from the start: each level's devices in ascending order, each device reached once, at the depth
 * it is first reached, `via` the smallest device of the level before that names it (or that it names), the edge's
 * origin the first of that pair's origins whose kind is followed. Edges into a device already reached are kept
 * aside, and those whose ends lie on one cycle of the walked edges are the answer's cycles.
 */
export async function walkLineage(files: LineageFiles, question: LineageQuestion, onLevel?: LevelListener): Promise<LineageWalk> {
  const { direction } = question;
  const start = lineageCode(question.id);
  const walk: LineageWalk = { known: false, codes: [], depths: [], vias: [], origins: [], infos: [], cycles: [] };
  const shards = new WalkShards(files, direction);
  await shards.load([start]);
  if (shards.at(start) < 0) return walk;
  walk.known = true;

  const scratch = takeScratch();
  scratch.seen[start >>> 5] = 1 << (start & 31);
  await expand(shards, question, walk, start, scratch, onLevel);
  giveBack(scratch, walk, start);
  return walk;
}

/**
 * Told, while a walk runs, each time a level is done: `known` devices of `walk` (its first ones, in answer order) are
 * final, info included, and so the first `known` of the whole answer. It reads `walk` at once: the walk goes on
 * after it returns. It changes nothing of the walk or its answer.
 */
export type LevelListener = (walk: Readonly<LineageWalk>, known: number) => void;

/** The walk itself, into `walk`, marking each device met in `scratch.seen`. */
async function expand(shards: WalkShards, question: LineageQuestion, walk: LineageWalk, start: number, scratch: Scratch, onLevel?: LevelListener): Promise<void> {
  const follows = shards.files.index.origins.map((o) => question.kinds === null || question.kinds.includes(o.kind));
  const { seen, targets, ends, back, keys, vias: newVias, origins: newOrigins } = scratch;
  let level: ArrayLike<number> = [start];
  /** Index in walk.codes of the level's first device (the start has none). */
  let levelBase = -1;
  let depth = 0;
  while (level.length > 0 && (question.depth === null || depth < question.depth)) {
    await shards.load(level);
    keys.length = newVias.length = newOrigins.length = 0;
    // Devices of the level are expanded in place order (ascending within the level), so `ends` is indexed by place;
    // a device's info is read here from the shard its edges come from.
    for (let l = 0; l < level.length; l++) {
      const from = level[l] as number;
      const shard = shards.of(from);
      const at = shards.at(from);
      if (!shard || at < 0) {
        ends.push(targets.length);
        continue;
      }
      if (levelBase >= 0) walk.infos[levelBase + l] = shard.info[at] as number;
      const edges = shard.edges;
      const begin = at === 0 ? 0 : (shard.ends[at - 1] as number);
      const end = shard.ends[at] as number;
      let last = -1;
      for (let e = begin; e < end; e++) {
        const edge = edges[e] as number;
        const to = edgeCode(edge);
        const origin = edgeOrigin(edge);
        // A pair's origins are consecutive, the strongest first: the first followed one stands for the pair.
        if (to === last || !follows[origin]) continue;
        last = to;
        targets.push(to);
        const word = to >>> 5;
        const bit = 1 << (to & 31);
        if ((seen[word] as number) & bit) {
          back.push(from);
          back.push(to);
          back.push(origin);
        } else {
          seen[word] = (seen[word] as number) | bit;
          keys.push(to * NEW_SPAN + newVias.length);
          newVias.push(from);
          newOrigins.push(origin);
        }
      }
      ends.push(targets.length);
    }
    // The level's devices have their info now; every device up to it is final (a later level only adds deeper ones).
    if (onLevel && levelBase >= 0) onLevel(walk, levelBase + level.length);
    depth++;
    // One numeric sort puts the level in code order and still finds each one's via and origin.
    const sorted = keys.data.subarray(0, keys.length).sort();
    const next = new Int32Array(sorted.length);
    levelBase = walk.codes.length;
    for (let i = 0; i < sorted.length; i++) {
      const key = sorted[i] as number;
      const code = Math.floor(key / NEW_SPAN);
      const found = key - code * NEW_SPAN;
      next[i] = code;
      walk.codes.push(code);
      walk.depths.push(depth);
      walk.vias.push(newVias.data[found] as number);
      walk.origins.push(newOrigins.data[found] as number);
      walk.infos.push(0);
    }
    level = next;
  }
  // The info of the devices not expanded (the last level of a walk cut by its depth): their shards may not be read.
  const rest = walk.codes.slice(ends.length - 1);
  await shards.load(rest);
  for (let i = ends.length - 1; i < walk.codes.length; i++) {
    const code = walk.codes[i] as number;
    const shard = shards.of(code);
    const at = shards.at(code);
    if (shard && at >= 0) walk.infos[i] = shard.info[at] as number;
  }
  // A back edge from a device reached within the same level as its target (a second path of equal length) was met
  // before the target entered the answer: it is a back edge all the same. With no back edge there is no cycle.
  if (back.length > 0) cyclesOf(walk, start, ends, targets, back);
}

/** Devices a level can meet for the first time: more than there are codes. */
const NEW_SPAN = 2 ** 22;

/**
 * The back edges whose ends lie in one strongly connected component of the walked edges, sorted, into walk.cycles.
 *
 * The components are searched only where a cycle can be. Devices are numbered in time, so nearly every edge of a walk
 * goes one way in code order (a device names older ones); call the fewer way "against". Around a cycle (or any closed
 * walk) whose codes span [m, M], m < M, every point between m and M is crossed both ways, so the cycle's own against
 * edges, as code intervals [low end, high end], cover [m, M] with no gap. So every cycle lies within one cluster of
 * overlapping against intervals, and two devices are in one component of the walked edges exactly when they are in
 * one component of the edges within a cluster; a back edge from a device to itself is a cycle alone. A walk with no
 * against edge has no cycle but those; the usual cluster is a device and its own later versions, a few devices.
 */
function cyclesOf(walk: LineageWalk, start: number, ends: IntList, targets: IntList, back: IntList): void {
  const n = walk.codes.length + 1;
  const codeAt = (p: number): number => (p === 0 ? start : (walk.codes[p - 1] as number));
  const ending = ends.data;
  const targeted = targets.data;
  const expanded = ends.length;
  // Which way the fewer edges go.
  let up = 0;
  let down = 0;
  for (let p = 0, e = 0; p < expanded; p++) {
    const from = codeAt(p);
    for (const end = ending[p] as number; e < end; e++) {
      const to = targeted[e] as number;
      if (to > from) up++;
      else if (to < from) down++;
    }
  }
  const rising = up <= down;
  // The against edges' intervals, merged into clusters (sorted, disjoint): lows and highs.
  const intervals: number[] = [];
  if (Math.min(up, down) > 0) {
    for (let p = 0, e = 0; p < expanded; p++) {
      const from = codeAt(p);
      for (const end = ending[p] as number; e < end; e++) {
        const to = targeted[e] as number;
        if (rising ? to > from : to < from) intervals.push(Math.min(from, to) * SPAN_KEY + Math.max(from, to));
      }
    }
  }
  const sortedIntervals = Float64Array.from(intervals).sort();
  const lows: number[] = [];
  const highs: number[] = [];
  for (const key of sortedIntervals) {
    const low = Math.floor(key / SPAN_KEY);
    const high = key - low * SPAN_KEY;
    if (highs.length > 0 && low <= (highs[highs.length - 1] as number)) highs[highs.length - 1] = Math.max(highs[highs.length - 1] as number, high);
    else {
      lows.push(low);
      highs.push(high);
    }
  }
  const clusterOf = (code: number): number => {
    let lo = 0;
    let hi = lows.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((lows[mid] as number) <= code) lo = mid + 1;
      else hi = mid;
    }
    return lo > 0 && code <= (highs[lo - 1] as number) ? lo - 1 : -1;
  };
  // The restricted graph: the walk's places within a cluster, numbered in place order, and their edges within it.
  const place = (places ??= new Int32Array(1 << CODE_BITS));
  const members: number[] = [];
  const clusters: number[] = [];
  if (lows.length > 0) {
    for (let p = 0; p < n; p++) {
      const code = codeAt(p);
      const c = clusterOf(code);
      if (c < 0) continue;
      members.push(p);
      clusters.push(c);
      place[code] = members.length;
    }
  }
  const localEnds: number[] = [];
  const localTargets: number[] = [];
  for (let v = 0; v < members.length; v++) {
    const p = members[v] as number;
    if (p < expanded) {
      for (let e = p === 0 ? 0 : (ending[p - 1] as number), end = ending[p] as number; e < end; e++) {
        const w = (place[targeted[e] as number] as number) - 1;
        if (w >= 0 && clusters[w] === clusters[v]) localTargets.push(w);
      }
    }
    localEnds.push(localTargets.length);
  }
  const component = components(members.length, localEnds, Int32Array.from(localTargets));
  const data = back.data;
  for (let b = 0; b < back.length; b += 3) {
    const from = data[b] as number;
    const to = data[b + 1] as number;
    const a = (place[from] as number) - 1;
    const z = (place[to] as number) - 1;
    if (from === to || (a >= 0 && z >= 0 && component[a] === component[z])) walk.cycles.push({ code: to, via: from, origin: data[b + 2] as number });
  }
  for (const p of members) place[codeAt(p)] = 0;
  walk.cycles.sort((a, b) => a.via - b.via || a.code - b.code);
}

/** An interval's low end × SPAN_KEY + its high end: one number that sorts intervals by low end. */
const SPAN_KEY = 2 ** 22;

/**
 * The strongly connected component of each place of a graph (iterative Tarjan, roots in place order): `ends[v]`
 * closes place v's targets in `targets` (places past `ends` have none).
 */
function components(n: number, ends: readonly number[], targets: Int32Array): Int32Array {
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const comp = new Int32Array(n);
  const stack = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const frames = new Int32Array(n);
  const cursor = new Int32Array(n);
  let top = 0;
  let depth = 0;
  let counter = 0;
  let next = 0;
  const first = (v: number) => (v === 0 ? 0 : v - 1 < ends.length ? (ends[v - 1] as number) : targets.length);
  const last = (v: number) => (v < ends.length ? (ends[v] as number) : first(v));
  for (let root = 0; root < n; root++) {
    if (index[root] !== -1) continue;
    index[root] = low[root] = counter++;
    stack[top++] = root;
    onStack[root] = 1;
    frames[0] = root;
    cursor[0] = first(root);
    depth = 1;
    while (depth > 0) {
      const v = frames[depth - 1] as number;
      const c = cursor[depth - 1] as number;
      if (c < last(v)) {
        cursor[depth - 1] = c + 1;
        const w = targets[c] as number;
        if (index[w] === -1) {
          index[w] = low[w] = counter++;
          stack[top++] = w;
          onStack[w] = 1;
          frames[depth] = w;
          cursor[depth] = first(w);
          depth++;
        } else if (onStack[w] && (index[w] as number) < (low[v] as number)) low[v] = index[w] as number;
        continue;
      }
      depth--;
      if (depth > 0) {
        const parent = frames[depth - 1] as number;
        if ((low[v] as number) < (low[parent] as number)) low[parent] = low[v] as number;
      }
      if (low[v] === index[v]) {
        let w: number;
        do {
          w = stack[--top] as number;
          onStack[w] = 0;
          comp[w] = next;
        } while (w !== v);
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
