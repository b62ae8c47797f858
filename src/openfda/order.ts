import { BadQuery } from './plan.ts';
import type { Order, PageAfter } from '../search/page.ts';

/**
 * openFDA's `search_after`: the key of the last record of the previous page, written `0=<value>;1=<K number>` as
 * openFDA writes its own (qs.stringify of the sort values with `;`). The page itself is made by src/search/page.ts.
 */
export function parseSearchAfter(raw: string): string[] {
  const parts = raw.split(';').map((p) => {
    const m = /^(\d+)=(.*)$/.exec(p);
    if (!m) throw new BadQuery(`search_after: "${raw}" is not a key this service wrote (0=<value>;1=<K number>)`);
    return [Number(m[1]), decodeURIComponent(m[2]!)] as const;
  });
  return parts.sort((a, b) => a[0] - b[0]).map((p) => p[1]);
}

const kDigits = (text: string | undefined): number => {
  const m = /^K(\d{6})$/i.exec(text ?? '');
  if (!m) throw new BadQuery(`search_after: its last value must be the K number of the previous page's last record`);
  return Number(m[1]);
};

/**
 * The key a page starts after, read from `search_after` when the page needs it: without `sort`, the decision day
 * (empty: undated) and the K number; with it, the K number and then the sort's key.
 */
export function afterOf(o: Order, after: readonly string[]): () => PageAfter {
  return o.sort
    ? () => {
        const k = kDigits(after[1]);
        return { first: o.sort!.keyOf(after[0] ?? ''), k };
      }
    : () => {
        const day = after[0] === '' || after[0] === undefined ? 0 : Number(after[0]);
        if (!Number.isInteger(day)) throw new BadQuery(`search_after: "${after[0]}" is not a key this service wrote`);
        return { first: day, k: kDigits(after[1]) };
      };
}

/** The `search_after` value that resumes after document `d`. */
export function afterKeyOf(o: Order, d: number): string {
  const k = `K${String(o.kNumber[d]!).padStart(6, '0')}`;
  const first = o.sort ? o.sort.keyText(o.sort.key(d)) : o.decided[d] === 0 ? '' : String(o.decided[d]!);
  return `0=${encodeURIComponent(first)};1=${k}`;
}
