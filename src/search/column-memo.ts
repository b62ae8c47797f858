import { kept } from './kept.ts';

/**
 * Values made from whole columns (passes over every document), kept by the column arrays they were made from rather
 * than by the index that lent them: the chunked index makes a new index over the files a request reads, and every such
 * index over the same cached columns reads the same arrays, so a pass made once serves them all. A value is made again
 * only when one of its arrays is new (its file was let go of and read again), and goes with its arrays.
 */
export class ColumnMemo<T> {
  private readonly root = new WeakMap<object, unknown>();

  /** `bytes`: what a value holds, told to the counter of its first array (kept.ts) when it is kept. */
  constructor(private readonly bytes: (value: T) => number = () => 0) {}

  /** The value kept for these arrays (and this `shape`: sizes the value depends on beyond the arrays), or undefined. */
  get(keys: readonly object[], shape = ''): T | undefined {
    const kept = this.leaf(keys, false)?.get(shape);
    return kept as T | undefined;
  }

  set(keys: readonly object[], value: T, shape = ''): T {
    const leaf = this.leaf(keys, true)!;
    if (!leaf.has(shape)) kept(keys[0]!, value, this.bytes(value));
    leaf.set(shape, value);
    return value;
  }

  /** The value for these arrays, made by `make` the first time. */
  of(keys: readonly object[], make: () => T, shape = ''): T {
    return this.get(keys, shape) ?? this.set(keys, make(), shape);
  }

  private leaf(keys: readonly object[], create: boolean): Map<string, unknown> | undefined {
    if (keys.length === 0) throw new RangeError('ColumnMemo: at least one array');
    let map = this.root;
    for (let i = 0; i < keys.length - 1; i++) {
      let next = map.get(keys[i]!) as WeakMap<object, unknown> | undefined;
      if (!next) {
        if (!create) return undefined;
        map.set(keys[i]!, (next = new WeakMap()));
      }
      map = next;
    }
    const last = keys[keys.length - 1]!;
    let leaf = map.get(last) as Map<string, unknown> | undefined;
    if (!leaf && create) map.set(last, (leaf = new Map()));
    return leaf;
  }
}
