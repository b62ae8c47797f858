import { QueryCostError } from './cost.ts';

/**
 * The one work budget of every engine: a hard bound on the work of a request, counted rather than timed, so that a
 * request is refused the same way on every machine and every run (and its refusal is testable without a clock), and
 * cut into slices, the work done between two turns given back to the host. Two configurations of it:
 *
 * - /v1/query (`QUERY_WORK`): a step is one record tested against one word or phrase (an OR branch, an exclusion),
 *   or one index entry listed for such a test. About 40 ns a step at a million records on one core, so the budget is
 *   some 100-200 ms of work; no query of the bench's realistic sets comes near it. A slice is a hundredth of it.
 * - openFDA (`OPENFDA_LIMITS`): a step is one document read in a pass (tested, listed, counted or ranked), 32
 *   documents of a bitmap combined (one word), or one dictionary entry compared: a pass over a column of a million
 *   records is a million steps, some 2 to 5 ms on one core. A slice is about a millisecond. It also bounds the
 *   clauses of a query and the dictionary entries its trailing wildcards expand to.
 *
 * Both bounds are absolute, not per record: they are about how long one request may hold the event loop, whatever the
 * size of the index.
 */
export type WorkLimits = { readonly work: number; readonly slice: number; readonly expansions?: number };

/** /v1/query's work budget and slice, in steps. */
export const QUERY_WORK = { work: 1_000_000, slice: 10_000 } as const;

/** openFDA's bounds: clauses of a query, dictionary entries its wildcards expand to, work and slice in steps. */
export const OPENFDA_LIMITS = { clauses: 256, expansions: 20_000, work: 32_000_000, slice: 262_144 } as const;

export type Limits = { clauses: number; expansions: number; work: number; slice: number };

/** The steps of /v1/query's budget (`QUERY_WORK.work`). */
export const WORK_BUDGET = QUERY_WORK.work;

/**
 * Steps an evaluation in slices (slices.ts) spends before it offers a yield point (`QUERY_WORK.slice`), so that no
 * turn of the event loop runs much more than a millisecond of one search's matching.
 */
export const SLICE_STEPS = QUERY_WORK.slice;

/** The error a budget throws once a bound is passed: which bound, its value, and what passed it (for expansions). */
export type Refusal = (bound: 'work' | 'expansions', max: number, what: string) => Error;

export class Budget {
  expansions = 0;
  /** Steps of work spent so far, and when the host last had its turn. */
  spent = 0;
  private mark = 0;
  /** Turns given back to the host so far. */
  turns = 0;
  /** The bounds as numbers of this object's own: the counting loops read them at every charge. */
  private readonly work: number;
  readonly slice: number;
  constructor(
    readonly limits: WorkLimits,
    /** Gives the host its turn; resolves when the request may go on (none: the work runs to its end at once). */
    private readonly pause: (() => Promise<void>) | null,
    private readonly refusal: Refusal,
    /** Whether a refusal ends the counting (the throw unwinds the work; nothing more is charged to it). */
    private readonly once = false,
  ) {
    this.work = limits.work;
    this.slice = limits.slice;
  }
  /** Counts `n` dictionary entries a wildcard expands to; refuses once they pass the bound. */
  expand(n: number, what: string): void {
    this.expansions += n;
    const max = this.limits.expansions ?? Infinity;
    if (this.expansions > max) throw this.refusal('expansions', max, what);
  }
  /** Counts `n` steps of work; refuses the request once its work passes the bound. */
  charge(n: number): void {
    if ((this.spent += n) > this.work) this.refuse();
  }
  /** Steps left before the bound (Infinity once a refusal has ended the counting). */
  get left(): number {
    return this.work - this.spent;
  }
  /** Whether a slice of work has been spent since the host last had its turn. */
  get due(): boolean {
    return this.spent - this.mark >= this.slice;
  }
  /** Gives the host its turn when a slice of work has been spent since it last had one. */
  async turn(): Promise<void> {
    if (!this.due) return;
    this.mark = this.spent;
    this.turns++;
    if (this.pause) await this.pause();
  }
  private refuse(): never {
    const err = this.refusal('work', this.work, '');
    if (this.once) this.spent = -Infinity;
    throw err;
  }
}

const n = (x: number): string => x.toLocaleString('en-US');

/** /v1/query's refusal: a QueryCostError of limit `work` (its message reads after the field's name). */
const refuseQuery: Refusal = (_bound, max) =>
  new QueryCostError(
    'work',
    max,
    max,
    `needs more than ${n(max)} steps of work (a step is one record tested against one word or phrase); at most ${n(max)} are allowed: use fewer OR branches or exclusions, or longer words`,
  );

/**
 * /v1/query's evaluation is synchronous, so the budget of the evaluation running now is one module-level budget:
 * `withWorkBudget` sets it around the call and restores the outer one after (an export's evaluation inside a test's,
 * say), and the loops that can grow with the query charge it through `spend`. Outside any, nothing is bounded.
 */
let current = new Budget({ work: Infinity, slice: Infinity }, null, refuseQuery, true);

/**
 * Runs `fn` with `steps` to spend; throws QueryCostError (limit `work`) from inside it once they are spent. `sliceSteps`
 * is what a slice spends before `sliceSpent` says so (SLICE_STEPS; tests give small ones).
 */
export function withWorkBudget<T>(steps: number, fn: () => T, sliceSteps: number = SLICE_STEPS): T {
  const outer = current;
  current = new Budget({ work: steps, slice: sliceSteps }, null, refuseQuery, true);
  try {
    return fn();
  } finally {
    current = outer;
  }
}

/** Charges `steps` to the evaluation running now (nothing outside `withWorkBudget`). */
export function spend(steps: number): void {
  current.charge(steps);
}

/** Steps left to the evaluation running now (Infinity outside `withWorkBudget`). */
export const stepsLeft = (): number => current.left;

/** Whether the evaluation running now has spent a slice's steps since `mark` (its `stepsLeft()` then); never outside a budget. */
export const sliceSpent = (mark: number): boolean => mark - current.left >= current.slice;

/** The steps of a slice of the evaluation running now (Infinity outside `withWorkBudget`). */
export const sliceSteps = (): number => current.slice;
