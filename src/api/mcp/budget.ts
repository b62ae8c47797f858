/**
 * A tool's answer under a byte budget: its structured content (JSON) and its text each stay at or under the budget, by
 * keeping the longest run of its list's entries that fits. Pure: values in, the count to keep out.
 */

/** The fewest bytes a budget may be: a search's head (its counts and facets) and one item fit in it. */
export const MIN_BUDGET_BYTES = 4096;
/**
 * The default: 16 KiB of JSON and 16 KiB of text, about 8,000 tokens together, a small share of a model's context
 * and under what desktop clients accept from one tool call (Claude Code warns above 10,000 tokens).
 */
export const DEFAULT_BUDGET_BYTES = 16 * 1024;

const encoder = new TextEncoder();
export const byteLength = (text: string): number => encoder.encode(text).length;

/**
 * Whether `text`'s UTF-8 stays within `budget` bytes, encoding it only when its length cannot tell: a UTF-16 unit is
 * 1 to 3 bytes of UTF-8 (a pair of them, 4), so a text of at most budget / 3 units fits and one of more than budget
 * units does not.
 */
function within(text: string, budget: number): boolean {
  if (text.length * 3 <= budget) return true;
  if (text.length > budget) return false;
  return byteLength(text) <= budget;
}

/** Checks a budget once, where it is configured: `budgetBytes must be…` names the rule. */
export function checkBudget(bytes: number, name = 'budgetBytes'): number {
  if (!Number.isInteger(bytes) || bytes < MIN_BUDGET_BYTES) throw new Error(`Expected \`${name}\` to be an integer from ${MIN_BUDGET_BYTES} and up, got ${String(bytes)}`);
  return bytes;
}

/**
 * The longest run of a list's first entries whose rendering fits `budget` in both forms: `render(k)` builds the answer
 * from the first `k` of `total` entries, and every entry adds bytes, so the count that fits is found by bisection over
 * k, each render checked in full rather than estimated. An entry is an object of at least 8 bytes of JSON, so no more
 * than budget / 8 can fit: a list of 100,000 facet values is never rendered whole. Returns the rendering kept.
 */
export function fitToBudget<R extends { json: string; text: string }>(total: number, budget: number, render: (k: number) => R): { k: number; rendered: R } {
  const fits = (r: R) => within(r.json, budget) && within(r.text, budget);
  const most = Math.min(total, Math.floor(budget / 8));
  const whole = render(most);
  if (fits(whole)) return { k: most, rendered: whole };
  // Invariant: lo fits (0 is assumed to: the head alone is well under the smallest budget), hi does not.
  let lo = 0;
  let hi = most;
  let kept: R | null = null;
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    const r = render(mid);
    if (fits(r)) [lo, kept] = [mid, r];
    else hi = mid;
  }
  return { k: lo, rendered: kept ?? render(lo) };
}

/**
 * The page that goes on exactly after the first `shown` records of page `page` of `pageSize`: the next record is at
 * offset (page − 1) × pageSize + shown, and a page size that divides that offset (the largest up to `shown`, at least 1)
 * starts a page there.
 */
export function nextPageAfter(page: number, pageSize: number, shown: number): { page: number; pageSize: number } {
  const offset = (page - 1) * pageSize + shown;
  let size = Math.max(1, shown);
  while (offset % size !== 0) size--;
  return { page: offset / size + 1, pageSize: size };
}
