import { sliceSpent, stepsLeft } from './budget.ts';
import type { Steps } from './slices.ts';

/**
 * One condition on documents beyond the words: `points(d)` is -1 when `d` fails it, else the points it adds.
 * `list` gives, ascending, a superset of the documents that pass (null when only a scan of candidates can tell), in an
 * array of its own that the caller may change (candidates are filtered in place);
 * `cost` is its length, used to pick the cheapest source of candidates.
 */
export type Condition = {
  /**
   * Makes, in slices, what `list` and `points` read (an OR group's tiers): the matching runs it where it first needs
   * either, so that no single slice makes all of it. Optional: `list` and `points` make it themselves when not warmed.
   */
  warm?: () => Steps<void>;
  cost: number;
  list: (() => Uint32Array) | null;
  points: (d: number) => number;
  mark?: Mark;
  /** The same filter as `mark`, in one pass: keeps the candidates that pass, in place (no marks to compact). */
  keep?: Keep;
  scan?: Scan;
  /** How many ids `scan` visits over lo..hi-1 (hi - lo when absent): a receipt date range skips the ids it cannot pass. */
  extent?: (lo: number, hi: number) => number;
  /** For filters: about which share of all documents passes (0..1), so the most selective runs first; 1 when unknown. */
  share?: number;
  /** `list` gives exactly the documents that pass: when it gives the candidates, they need no `mark`. */
  exact?: boolean;
};

/**
 * A condition that only filters (it adds no points), run over many candidates at once: sets marks[i] to 1 for each
 * docs[i] (i < n) that passes and leaves the other marks alone. A tight loop over a column instead of a call per
 * candidate; an OR of filters is one pass per term over the same marks.
 */
export type Mark = (docs: Uint32Array, n: number, marks: Uint8Array) => void;

/** A filter over candidates in place: keeps docs[i] (i < n) that pass, in order, at the front; returns how many. */
export type Keep = (docs: Uint32Array, n: number) => number;

/** The same filter over the ids lo..hi-1 with no list made: writes those that pass to `out`, ascending; returns how many. */
export type Scan = (lo: number, hi: number, out: Uint32Array) => number;

/** Every matching document, ascending by id (the tie order), and its relevance score when there are query words. */
export type Matches = { docs: Uint32Array; scores: Uint32Array | null };

/**
 * The yield points of one matching (slices.ts): a phase yields once a slice's steps of the work budget are spent
 * since the last yield (budget.ts), and a condition's state is made in slices (`warm`) before its first use.
 */
export class Pace {
  private mark = stepsLeft();
  private readonly warmed = new Set<Condition>();

  /** Whether this slice's steps are spent: the caller yields, then calls `restart`. */
  spent(): boolean {
    return sliceSpent(this.mark);
  }

  /** A new slice starts here. */
  restart(): void {
    this.mark = stepsLeft();
  }

  /** Makes a condition's state in slices before its first use (once per condition); a new slice starts after it. */
  *warm(c: Condition | undefined): Steps<void> {
    if (!c?.warm || this.warmed.has(c)) return;
    this.warmed.add(c);
    yield* c.warm();
    this.mark = stepsLeft();
  }
}
