/**
 * A least-recently-used map bounded by the summed weight of its entries (by default each weighs 1, so the bound is a
 * count; the snapshot's cache weighs entries in bytes). A Map keeps insertion order, so re-inserting on every hit
 * keeps the coldest entry first, and evicting it is O(1). An entry heavier than the whole capacity is not kept.
 * `onEvict`, when given, is told of each entry pushed out by the bound (not of one deleted or replaced by its key),
 * for values that hold something to let go of (open descriptors).
 */
export class LruCache<K, V> {
  private bound: number;
  private readonly map = new Map<K, V>();
  private readonly weigh: (value: V) => number;
  private readonly onEvict: ((key: K, value: V) => void) | undefined;
  private total = 0;

  constructor(capacity: number, weigh: (value: V) => number = () => 1, onEvict?: (key: K, value: V) => void) {
    this.bound = checkedCapacity(capacity);
    this.weigh = weigh;
    this.onEvict = onEvict;
  }

  get capacity(): number {
    return this.bound;
  }

  /** A new bound; the coldest entries are evicted down to it. */
  resize(capacity: number): void {
    this.bound = checkedCapacity(capacity);
    this.evictOver();
  }

  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, value);
    return value;
  }

  set(key: K, value: V): void {
    this.delete(key);
    const weight = this.weigh(value);
    if (weight > this.capacity) return;
    this.map.set(key, value);
    this.total += weight;
    this.evictOver();
  }

  /** Evicts every entry, as the bound would (`onEvict` is told of each). */
  evictAll(): void {
    for (const [key, value] of [...this.map]) {
      this.map.delete(key);
      this.total -= this.weigh(value);
      this.onEvict?.(key, value);
    }
  }

  private evictOver(): void {
    while (this.total > this.bound) {
      const coldest = this.map.entries().next();
      if (coldest.done) break;
      this.map.delete(coldest.value[0]);
      this.total -= this.weigh(coldest.value[1]);
      this.onEvict?.(coldest.value[0], coldest.value[1]);
    }
  }

  delete(key: K): void {
    const value = this.map.get(key);
    if (value === undefined) return;
    this.map.delete(key);
    this.total -= this.weigh(value);
  }

  get size(): number {
    return this.map.size;
  }

  /** The summed weight of the entries held. */
  get weight(): number {
    return this.total;
  }
}

function checkedCapacity(capacity: number): number {
  if (!Number.isInteger(capacity) || capacity < 1) throw new Error(`Expected \`capacity\` to be an integer from 1 and up, got ${capacity}`);
  return capacity;
}
