/**
 * ArrayBuffers kept for reuse, by size class: `minBytes`, twice that, and so on up to `maxBytes`. A buffer asked for is
 * one of the smallest class that holds it, taken back from an earlier use when one is free; a size past `maxBytes`
 * gets a buffer of its own that is never kept. Of the smallest class `keepSmallest` are kept, of each larger one as
 * many as fit in `keepBytesPerClass` (one at least).
 *
 * A new ArrayBuffer for each answer or each shard read (36 KB to 1 MB) was a zeroed allocation the collector then had
 * to count and free: most of what the allocator and the collector did for catalog pages and first reads of shards.
 * Plain JavaScript with no Node module, so the snapshot's reads use it in a Worker as on Node.
 */
export class BufferPool {
  private readonly free: ArrayBuffer[][] = [];

  constructor(
    readonly minBytes: number,
    readonly maxBytes: number,
    private readonly keepSmallest: number,
    private readonly keepBytesPerClass: number,
  ) {
    if (!(minBytes > 0 && maxBytes >= minBytes)) throw new Error(`Expected 0 < minBytes <= maxBytes, got ${minBytes} and ${maxBytes}`);
  }

  /** A buffer of at least `bytes`: a free one of its class, else a new one of the class's size (or of `bytes` past the largest). */
  take(bytes: number): ArrayBuffer {
    const size = this.classOf(bytes);
    if (size < 0) return new ArrayBuffer(bytes);
    return this.free[size]?.pop() ?? new ArrayBuffer(this.minBytes * 2 ** size);
  }

  /** Keeps `buffer` for a later `take` when it is of a class's exact size and that class has room; else lets it go. */
  give(buffer: ArrayBufferLike): void {
    const size = this.classOf(buffer.byteLength);
    if (size < 0 || this.minBytes * 2 ** size !== buffer.byteLength) return;
    const free = (this.free[size] ??= []);
    const keep = size === 0 ? this.keepSmallest : Math.max(1, Math.floor(this.keepBytesPerClass / buffer.byteLength));
    if (free.length < keep) free.push(buffer as ArrayBuffer);
  }

  /** Bytes of the buffers kept now. */
  get keptBytes(): number {
    return this.free.reduce((n, list) => n + list.reduce((m, b) => m + b.byteLength, 0), 0);
  }

  /** Buffers kept now (for tests). */
  get kept(): number {
    return this.free.reduce((n, list) => n + list.length, 0);
  }

  /** The class whose buffers hold `bytes` (0 for minBytes, 1 for twice that…), or -1 past maxBytes. */
  private classOf(bytes: number): number {
    if (bytes > this.maxBytes) return -1;
    let size = 0;
    while (this.minBytes * 2 ** size < bytes) size++;
    return size;
  }
}
