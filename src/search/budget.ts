import { QueryCostError } from './cost.ts';

/**
 * A hard bound on the work of one evaluation, counted rather than timed, so that a query is refused the same way on
 * every machine and every run (and its refusal is testable without a clock). A step is one record tested against one
 * word or phrase (an OR branch, an exclusion), or one index entry listed for such a test. Evaluation is synchronous,
 * so the budget of the evaluation running now is one module-level counter: `withWorkBudget` sets it around the call
 * and restores the outer one after (an export's evaluation inside a test's, say), and the loops that can grow with the query charge it through `spend`.
 *
 * The bound is absolute, not per record: it is about how long one request may hold the event loop, whatever the size
 * of the index. About 40 ns a step at a million records on one core, so the budget is some 100-200 ms of work; no
 * query of the bench's realistic sets comes near it.
 */
export const WORK_BUDGET = 1_000_000;

let left = Infinity;
let limit = Infinity;
let slice = Infinity;

/**
 * Runs `fn` with `steps` to spend; throws QueryCostError (limit `work`) from inside it once they are spent. `sliceSteps`
 * is what a slice spends before `sliceSpent` says so (SLICE_STEPS; tests give small ones).
 */
export function withWorkBudget<T>(steps: number, fn: () => T, sliceSteps: number = SLICE_STEPS): T {
  const outerLeft = left;
  const outerLimit = limit;
  const outerSlice = slice;
  left = steps;
  limit = steps;
  slice = sliceSteps;
  try {
    return fn();
  } finally {
    left = outerLeft;
    limit = outerLimit;
    slice = outerSlice;
  }
}

/** Charges `steps` to the evaluation running now (nothing outside `withWorkBudget`). */
export function spend(steps: number): void {
  left -= steps;
  if (left < 0) refuse();
}

/** Steps left to the evaluation running now (Infinity outside `withWorkBudget`). */
export const stepsLeft = (): number => left;

/**
 * Steps an evaluation in slices (slices.ts) spends before it offers a yield point: a hundredth of the budget, about a
 * millisecond of work, so that no turn of the event loop runs much more than that of one search's matching.
 */
export const SLICE_STEPS = 10_000;

/** Whether the evaluation running now has spent a slice's steps since `mark` (its `stepsLeft()` then); never outside a budget. */
export const sliceSpent = (mark: number): boolean => mark - left >= slice;

/** The steps of a slice of the evaluation running now (Infinity outside `withWorkBudget`). */
export const sliceSteps = (): number => slice;

function refuse(): never {
  const max = limit;
  left = Infinity; // the throw unwinds the evaluation; nothing more is charged to it
  throw new QueryCostError(
    'work',
    max,
    max,
    `needs more than ${max.toLocaleString('en-US')} steps of work (a step is one record tested against one word or phrase); at most ${max.toLocaleString('en-US')} are allowed: use fewer OR branches or exclusions, or longer words`,
  );
}
