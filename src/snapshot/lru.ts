/**
 * A least-recently-used map with a fixed number of entries. A Map keeps insertion order, so re-inserting on every
 * hit keeps the coldest entry first, and evicting it is O(1).
 */
export class LruCache<K, V> {
  readonly capacity: number;
  private readonly map = new Map<K, V>();

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error(`Expected \`capacity\` to be an integer from 1 and up, got ${capacity}`);
    this.capacity = capacity;
  }

  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, value);
    return value;
  }

  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.capacity) {
      const coldest = this.map.keys().next();
      if (!coldest.done) this.map.delete(coldest.value);
    }
  }

  delete(key: K): void {
    this.map.delete(key);
  }

  get size(): number {
    return this.map.size;
  }
}
