import type { ListOrRange } from './docset.ts';

/**
 * Search in slices that give the event loop back. A search is written once, as a generator whose each `yield` is a
 * point where it may stop for a while (between the phases of a search, between the slices of a facet count); run to
 * the end at once (`runSteps`) it is the synchronous engine, and run by `runSliced` it gives the host its turn at
 * every such point, and stops there for good once it is cancelled. Both run the same code, so both give the same
 * answer.
 *
 * No slice is unbounded: matching offers a yield point each time it has spent `sliceSteps` of the counted work budget
 * (budget.ts), and the whole of it is bounded by that budget; a facet count is cut every `sliceDocs` documents.
 */
export type Steps<T> = Generator<void, T, void>;

/** Cancelled work: an AbortSignal is one. */
export type Cancellation = { readonly aborted: boolean; readonly reason?: unknown };

export type Slicing = {
  /** Resolves when the search may go on: the host's turn queue, or the platform's yield (`platformPause`). */
  pause: () => Promise<void>;
  /** Checked at every yield point: once aborted (the operation's deadline has passed), the search stops there. */
  cancel?: Cancellation;
  /** Documents counted in one slice of a facet count (`SLICE_DOCS`; tests give small ones). */
  sliceDocs?: number;
  /** Steps of the work budget that matching spends between two yield points (`SLICE_STEPS` of budget.ts; tests give small ones). */
  sliceSteps?: number;
  /** Told the document ids of the answer's page, in answer order (a reader that holds K numbers apart: chunked.ts). */
  onPage?: (docs: Uint32Array) => void;
};

/** Documents a facet count reads between two yield points: a few milliseconds of one column at a million records. */
export const SLICE_DOCS = 131_072;

/** What a search throws at a yield point once it is cancelled (when the cancellation gives no reason of its own). */
export class SearchCancelled extends Error {
  override readonly name = 'SearchCancelled';
  constructor() {
    super('the search was stopped at its deadline');
  }
}

/** Runs the steps to the end, synchronously. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

/** Runs the steps with a pause at each yield point; throws the cancellation's reason at the first point after it. */
export async function runSliced<T>(steps: Steps<T>, slicing: Slicing): Promise<T> {
  const { cancel } = slicing;
  try {
    for (;;) {
      if (cancel?.aborted) throw cancel.reason ?? new SearchCancelled();
      const next = steps.next();
      if (next.done) return next.value;
      await slicing.pause();
    }
  } finally {
    // A generator stopped early runs its `finally` blocks (counts lent to it are given back).
    steps.return(undefined as never);
  }
}

/** The platform's yield: `scheduler.yield()` where there is one (browsers, Workers), else a zero timer. No Node API. */
export function platformPause(): Promise<void> {
  const scheduler = (globalThis as { scheduler?: { yield?: () => Promise<void> } }).scheduler;
  if (typeof scheduler?.yield === 'function') return scheduler.yield();
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** The documents in slices of at most `size`: pieces of the list, or of the range. */
export function* slicesOf(docs: ListOrRange, size: number): Generator<ListOrRange, void, void> {
  if (docs instanceof Uint32Array) {
    for (let i = 0; i < docs.length; i += size) yield docs.subarray(i, Math.min(docs.length, i + size));
  } else {
    for (let lo = docs.lo; lo < docs.hi; lo += size) yield { lo, hi: Math.min(docs.hi, lo + size) };
  }
}
