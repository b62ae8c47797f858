import type { z } from 'zod';
import type { Facet, OperationName, Page, RequestedFacet, ResponseSchemas } from '../contract/index.ts';
import type { Snapshot } from '../snapshot/index.ts';
import type { CursorCodec } from './cursor.ts';

/**
 * JSON that is already bytes (a record cut from its shard, a list of them), sent as it is. `T` is the type of the
 * value the bytes spell, so an operation's answer is typed by the contract whether it is built or spliced.
 */
export class JsonBytes<T> {
  declare readonly spells: T;
  readonly bytes: Uint8Array;
  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
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
};

/** The `data` member of an operation's answer, from the contract's response schema. */
export type DataOf<N extends OperationName> = z.output<(typeof ResponseSchemas)[N]>['data'];

/** `data` goes into the envelope as it is (bytes spliced in); `warnings` are added to `sourceState.warnings`. */
export type OperationResult<D = unknown> = {
  data: D | JsonBytes<D>;
  page?: Page;
  facets?: Facet[] | RequestedFacet[];
  warnings?: string[];
};

/** Checks that need no snapshot (a cursor's MAC) run in `prepare`, before the server looks for a snapshot. */
export type PrepareContext = { cursors: CursorCodec };

export type Operation<S extends z.ZodType = z.ZodType, P = z.output<S>, D = unknown> = {
  input: S;
  prepare?: (input: z.output<S>, ctx: PrepareContext) => P;
  /**
   * The answer is a pure function of the snapshot and the input (no cursor, no clock), and costly enough to compute
   * that keeping it as bytes pays (src/api/answer-cache.ts).
   */
  cacheable?: boolean;
  handler: (input: P, ctx: OperationContext) => Promise<OperationResult<D>>;
};
