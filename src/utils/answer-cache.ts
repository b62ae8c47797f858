import { LruCache } from './lru.ts';

/**
 * What an answer is made of apart from `sourceState`, as bytes: everything an operation computes from its snapshot and
 * its input. `sourceState` is written per answer (it carries `servedAt`), so it is spliced in between.
 */
export type AnswerParts = {
  /** The operation's `data`, as JSON bytes. */
  data: Uint8Array;
  /** `,"page":…,"facets":…}`: what follows `sourceState` up to the envelope's end. */
  tail: Uint8Array;
  warnings: readonly string[] | undefined;
  /** Room around `data` in its buffer that the answer may be written into (never for parts that are cached). */
  spare?: { before: number; after: number };
  /**
   * openFDA answers (src/openfda): what the Link header's next page changes in the request's own parameters, which
   * the header carries as each request spelled them (so it is written per request); absent: no next page.
   */
  next?: NextPage;
};

/** The parameters a next page sets, and those it drops, in a request's own (src/openfda/envelope.ts `nextLink`). */
export type NextPage = { readonly set: Readonly<Record<string, string>>; readonly drop: readonly string[] };

/**
 * Answers of operations that are pure functions of (snapshot, input), kept as bytes for the snapshot's life and
 * bounded by their summed size. A search answer costs the engine a millisecond or more at a million records (and its
 * records' reads); the same search asked again (the page people land on, a link shared, a page reloaded) then costs a
 * map lookup. Keys are the operation and its input as the contract's schema normalized it (defaults filled in, members
 * in schema order), so spellings of one request share an entry. Entries belong to one snapshot (the object passed in:
 * any object, this cache knows nothing of snapshots), so a switch starts empty.
 */
export class AnswerCache {
  readonly capacityBytes: number;
  private readonly bySnapshot = new WeakMap<object, LruCache<string, Entry>>();

  /** `capacityBytes` of 0 keeps nothing (every answer is computed). */
  constructor(capacityBytes: number) {
    if (!(Number.isInteger(capacityBytes) && capacityBytes >= 0)) throw new Error(`Expected \`capacityBytes\` to be an integer from 0 and up, got ${capacityBytes}`);
    this.capacityBytes = capacityBytes;
  }

  /** `operation` is an operation's name (`device-510k.search`), or another name of the same cache's users (`openfda:510k`). */
  static keyOf(operation: string, input: unknown): string {
    return `${operation}\u0000${JSON.stringify(input)}`;
  }

  get(snapshot: object, key: string): AnswerParts | undefined {
    return this.capacityBytes === 0 ? undefined : this.bySnapshot.get(snapshot)?.get(key);
  }

  set(snapshot: object, key: string, parts: AnswerParts): void {
    if (this.capacityBytes === 0) return;
    let lru = this.bySnapshot.get(snapshot);
    if (!lru) {
      lru = new LruCache<string, Entry>(this.capacityBytes, (entry) => entry.weight);
      this.bySnapshot.set(snapshot, lru);
    }
    // The key's characters count twice (UTF-16); 128 bytes stand for the map's and the objects' own overhead.
    lru.set(key, { ...parts, weight: parts.data.length + parts.tail.length + key.length * 2 + 128 });
  }

  /** Bytes held for a snapshot (for tests and measurements). */
  weightFor(snapshot: object): number {
    return this.bySnapshot.get(snapshot)?.weight ?? 0;
  }
}

type Entry = AnswerParts & { weight: number };

/** 16 MiB: about 4,000 search answers of 20 records. */
export const DEFAULT_ANSWER_CACHE_BYTES = 16 * 1024 * 1024;
