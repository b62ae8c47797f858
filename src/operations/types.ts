import type { z } from 'zod';
import type { Facet, OperationName, Page, RequestedFacet, ResponseSchemas } from '../contract/index.ts';
import type { ShardLines, Snapshot } from '../snapshot/index.ts';
import type { CursorCodec } from './cursor.ts';
import type { Cancellation } from '../search/slices.ts';

/**
 * JSON that is already bytes (a record cut from its shard, a list of them), sent as it is. `T` is the type of the
 * value the bytes spell, so an operation's answer is typed by the contract whether it is built or spliced.
 */
export class JsonBytes<T> {
  declare readonly spells: T;
  readonly bytes: Uint8Array;
  /**
   * Bytes of `bytes`'s buffer just before and just after it that belong to these bytes alone and may be written:
   * room an answer's envelope can be written into around `data` instead of copying `data` into a new buffer.
   */
  readonly spare: { before: number; after: number } | undefined;
  constructor(bytes: Uint8Array, spare?: { before: number; after: number }) {
    this.bytes = bytes;
    this.spare = spare;
  }

  /** `prefix` + the parts joined by `,` + `suffix`, as one piece of JSON (for example `{"items":[` … `]}`). */
  static join<T>(prefix: string, parts: readonly Uint8Array[], suffix: string): JsonBytes<T> {
    const head = encoder.encode(prefix);
    const tail = encoder.encode(suffix);
    let size = head.length + tail.length + Math.max(0, parts.length - 1);
    for (const p of parts) size += p.length;
    const out = new Uint8Array(size);
    out.set(head, 0);
    let at = head.length;
    parts.forEach((p, i) => {
      if (i > 0) out[at++] = 0x2c;
      out.set(p, at);
      at += p.length;
    });
    out.set(tail, at);
    return new JsonBytes<T>(out);
  }

  /**
   * `prefix` + the entries of the runs joined by `,` + `suffix`. Each run's stretch of its shard is copied once and
   * its entries then moved together over the separators between them (`,` and a newline in a shard), within the
   * output: no view is made per entry (a catalog page has up to 500).
   */
  static joinRuns<T>(
    prefix: string,
    runs: readonly { lines: ShardLines; from: number; to: number }[],
    count: number,
    suffix: string,
    spare: { before: number; after: number } = { before: 0, after: 0 },
    allocate: (size: number) => Uint8Array = (size) => new Uint8Array(size),
  ): JsonBytes<T> {
    const head = encoder.encode(prefix);
    const tail = encoder.encode(suffix);
    let size = head.length + tail.length + Math.max(0, count - 1);
    // A stretch is longer than its entries and commas by its separators' other bytes: the last one copied needs
    // that much room past the answer's end, which `bytes` does not include.
    let slack = 0;
    for (const { lines, from, to } of runs) {
      let entries = 0;
      for (let i = from; i < to; i++) entries += (lines.ends[i] as number) - (lines.starts[i] as number);
      size += entries;
      if (to > from) slack = Math.max(slack, (lines.ends[to - 1] as number) - (lines.starts[from] as number) - entries - (to - from - 1));
    }
    const buffer = allocate(spare.before + size + Math.max(slack, spare.after));
    const out = buffer.subarray(spare.before);
    out.set(head, 0);
    let at = head.length;
    let firstEntry = true;
    for (const { lines, from, to } of runs) {
      if (to <= from) continue;
      const base = lines.starts[from] as number;
      const stretch = (lines.ends[to - 1] as number) - base;
      // The whole stretch goes where its first entry belongs; it is at least as long as what stays of it, and each
      // entry only ever moves towards the start, so copyWithin never overwrites what it has yet to move.
      if (!firstEntry) out[at++] = 0x2c;
      firstEntry = false;
      const landed = at;
      out.set(lines.bytes.subarray(base, base + stretch), landed);
      at += (lines.ends[from] as number) - base;
      for (let i = from + 1; i < to; i++) {
        out[at++] = 0x2c;
        const start = landed + ((lines.starts[i] as number) - base);
        const length = (lines.ends[i] as number) - (lines.starts[i] as number);
        out.copyWithin(at, start, start + length);
        at += length;
      }
    }
    out.set(tail, at);
    return new JsonBytes<T>(out.subarray(0, size), { before: spare.before, after: buffer.length - spare.before - size });
  }

  /** The value, parsed (for tests and tools; answers send the bytes). */
  toJSON(): T {
    return JSON.parse(decoder.decode(this.bytes)) as T;
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** What every operation gets besides its input: the snapshot the request started on, and the time of the answer. */
export type OperationContext = {
  snapshot: Snapshot;
  servedAt: Date;
  cursors: CursorCodec;
  /**
   * Where a large answer's bytes may be made (the host's buffers: src/api/query-answer.ts `allocate`). Given only to
   * operations whose answers are not kept after they are sent.
   */
  allocate?: (size: number) => Uint8Array;
  /**
   * Where a long operation (a search) gives the event loop back between its slices: the host's turn queue; the
   * platform's yield when absent (src/search/slices.ts).
   */
  pause?: () => Promise<void>;
  /** Aborted once the operation's deadline has passed: a long operation stops at its next yield point. */
  cancel?: Cancellation;
  /** The values one search facet may list (the host's `FACET_VALUES_MAX`); the contract's default when absent. */
  facetValuesMax?: number;
};

/** The `data` member of an operation's answer, from the contract's response schema. */
export type DataOf<N extends OperationName> = z.output<(typeof ResponseSchemas)[N]>['data'];

/** `data` goes into the envelope as it is (bytes spliced in); `warnings` are added to `sourceState.warnings`. */
export type OperationResult<D = unknown> = {
  data: D | JsonBytes<D>;
  page?: Page;
  /** As they are, or already JSON (many values, written in pieces: facets-json.ts). */
  facets?: Facet[] | RequestedFacet[] | JsonBytes<Facet[] | RequestedFacet[]>;
  warnings?: string[];
};

/** Checks that need no snapshot (a cursor's MAC) run in `prepare`, before the server looks for a snapshot. */
export type PrepareContext = { cursors: CursorCodec };

export type Operation<S extends z.ZodType = z.ZodType, P = z.output<S>, D = unknown> = {
  input: S;
  prepare?: (input: z.output<S>, ctx: PrepareContext) => P;
  /**
   * The answer is a pure function of the snapshot and the input (no cursor, no clock), and costly enough to compute
   * that keeping it as bytes pays (src/utils/answer-cache.ts).
   */
  cacheable?: boolean;
  /** An answer at hand (meta's) is returned as it is: it needs no deadline and no wait for the microtask queue. */
  handler: (input: P, ctx: OperationContext) => OperationResult<D> | Promise<OperationResult<D>>;
};
